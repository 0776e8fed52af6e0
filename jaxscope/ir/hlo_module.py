"""The optimized HLO text (``Compiled.as_text()``) as data: instructions, computations, fusions.

Each instruction's ``metadata={op_name="..." stack_frame_id=N}`` is resolved through the
``FileNames``/``FunctionNames``/``FileLocations``/``StackFrames`` tables printed at the top of the
text, so an HLO line links to user code, and a fusion lists the ops (and so the source lines,
possibly from several jaxpr sub-graphs) XLA merged into one kernel. Same conventions and
guarantees as `jaxscope.ir.hlo_locations` (1-based lines, innermost frame first, never raises
on garbage); the StableHLO side lives there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from jaxscope.ir.hlo_locations import Frame, SourceIndex, UserFile, build_index, primitive_of, unescape, user_picker


@dataclass(frozen=True)
class HloInstr:
    """One instruction line of an HLO text, with its metadata resolved to a stack."""

    line: int
    name: str  # "sin.0" (without the %)
    opcode: str  # "sine", "fusion", "while"
    computation: str  # the computation it belongs to
    op_name: str = ""  # metadata op_name: "jit(f)/jit(inner)/sin"; a parameter's argument name
    primitive: str = ""
    frames: tuple[Frame, ...] = ()
    functions: tuple[str, ...] = ()
    user: Frame | None = None
    called: tuple[str, ...] = ()  # computations it calls (calls=, to_apply=, body=, branches...)
    fusion_kind: str = ""  # kLoop, kInput, kOutput, kCustom for a fusion instruction
    is_root: bool = False


@dataclass(frozen=True)
class HloComputation:
    """A computation block: its header line, closing line, and whether a fusion calls it."""

    name: str
    line: int
    end_line: int
    is_entry: bool = False
    is_fused: bool = False


@dataclass(frozen=True)
class HloFusion:
    """A fusion instruction outside fused code: the ops XLA merged into one kernel, which may
    come from several source lines and several jaxpr sub-graphs (top level + nested jit)."""

    line: int
    name: str
    kind: str
    fused_computation: str
    computation: str  # where the fusion instruction itself lives
    instructions: tuple[HloInstr, ...]  # inside the fused computation (nested fusions flattened), no parameters


@dataclass(frozen=True)
class HloModuleMap:
    """Every instruction line of a compiled HLO text -> name, opcode, metadata and stack."""

    name: str = ""
    entry: str = ""
    instructions: dict[int, HloInstr] = field(default_factory=dict)
    computations: dict[str, HloComputation] = field(default_factory=dict)
    fusions: dict[str, HloFusion] = field(default_factory=dict)  # by fusion instruction name
    index: SourceIndex = field(default_factory=SourceIndex, repr=False)
    fusion_lines: dict[int, str] = field(default_factory=dict, repr=False)

    def lines_for_source(self, file: str, line: int, any_frame: bool = False) -> list[int]:
        """Instruction lines whose user frame (or, with `any_frame`, any frame) is at file:line."""
        return self.index.lines(file, line, any_frame)

    def source_for_line(self, n: int) -> Frame | None:
        """The user frame of the instruction on line `n`, if any."""
        ins = self.instructions.get(n)
        return ins.user if ins else None

    def fusion_of_line(self, n: int) -> HloFusion | None:
        """The fusion a line belongs to: the fusion instruction, or a line of its fused computation."""
        name = self.fusion_lines.get(n)
        return self.fusions.get(name) if name else None


_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")
_ROW_NAME = re.compile(r'^(\d+) "((?:[^"\\]|\\.)*)"$')
_ROW_KV = re.compile(r"^(\d+) \{(.*)\}$")
# \b (here and in _META_KV): a key starts a word, so a long word without "=" is scanned once, not
# once from each of its letters.
_KV_INT = re.compile(r"\b(\w+)=(\d+)")
# A header: "name {" or "name (params) -> result {". The "(...) -> ..." part is checked apart
# (_ARROW on group 3): one regex with two ".*" backtracked quadratically on a junk line of ")->".
_COMP = re.compile(r"^(ENTRY\s+)?%?([\w.\-]+)\s*(\(.*)?\{\s*$")
_ARROW = re.compile(r"\)\s*->")
_INSTR = re.compile(r"^\s+(ROOT\s+)?%?([\w.\-]+)\s*=\s*")
_OPCODE = re.compile(r"\s*([a-z][\w\-]*)")
_PARENS = re.compile(r"[()]")
_META = re.compile(r'\bmetadata=\{((?:[^{}"]|"(?:[^"\\]|\\.)*")*)\}')
_META_KV = re.compile(r'\b(\w+)=("(?:[^"\\]|\\.)*"|[^\s"]+)')
# No "{" inside "{...}": a junk line of "calls={" x 20000 would rescan to its end from each one.
_CALLS = re.compile(r"\b(calls|to_apply|body|condition|select|scatter|\w*computations?)=(\{[^{}]*\}|%?[\w.\-]+)")
_CALL_KEYS = ("calls=", "to_apply=", "body=", "condition=", "select=", "scatter=", "computation")
_KIND = re.compile(r"\bkind=(k\w+)")


# An instruction's metadata resolved: (op_name, primitive, frames, functions, user frame).
_Located = tuple[str, str, tuple[Frame, ...], tuple[str, ...], Frame | None]


def _close(s: str, i: int) -> int:
    """Index just past the parenthesis group opening at s[i] (len(s) when unbalanced)."""
    depth = 0
    for m in _PARENS.finditer(s, i):
        depth += 1 if m.group() == "(" else -1
        if depth == 0:
            return m.end()
    return len(s)


def _metadata(attrs: str) -> str:
    """The inside of the first ``metadata={...}``, as `_META.search` finds it, from at most 8 starts:
    a real line has one, and on a junk line each failed start may scan to the end of the line."""
    at = attrs.find("metadata={")
    for _ in range(8):
        if at < 0:
            break
        if m := _META.match(attrs, at):
            return m.group(1)
        at = attrs.find("metadata={", at + 1)
    return ""


def _instr(line: str, m: re.Match[str]) -> tuple[str, str]:
    """(opcode, operands and attributes) of an instruction line whose `name = ` prefix `m` matched."""
    i = m.end()
    i = _close(line, i) if line.startswith("(", i) else line.find(" ", i)  # past the shape
    op = _OPCODE.match(line, i) if i >= 0 else None
    return (op.group(1), line[op.end() :]) if op else ("", line[max(i, 0) :])


def parse_hlo(text: str, user_file: UserFile | None = None) -> HloModuleMap:
    """Instructions, computations and fusions of an HLO text (``Compiled.as_text()``).

    ``stack_frame_id`` goes through the tables at the top of the text. The printed
    ``parent_frame_id`` is the real parent id + 1 (1 = no parent), checked against known call
    chains (research/jax-internals.md §5.3). Older ``source_file=``/``source_line=`` metadata is
    used when there is no stack frame id.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_hlo expects str, not {type(text).__name__}")
    names, locs, parents, raw, comps, module, entry = _scan(text)

    stacks: dict[int, tuple[tuple[Frame, ...], tuple[str, ...]]] = {0: ((), ())}

    def stack(fid: int) -> tuple[tuple[Frame, ...], tuple[str, ...]]:
        chain: list[int] = []
        while fid not in stacks and fid in parents and len(chain) < 10_000:
            chain.append(fid)
            stacks[fid] = ((), ())  # a cycle ends the stack
            fid = parents[fid][1]
        for f in reversed(chain):
            loc = locs.get(parents[f][0], {})
            frame = (names["FileNames"].get(loc.get("file_name_id", 0), ""), loc.get("line", 0), loc.get("column", 0))
            below = stacks.get(parents[f][1], ((), ()))
            stacks[f] = ((frame, *below[0]), (names["FunctionNames"].get(loc.get("function_name_id", 0), ""), *below[1]))
        return stacks.get(fid if not chain else chain[0], ((), ()))

    pick = user_picker(user_file)
    located: dict[str, _Located] = {"": ("", "", (), (), None)}  # metadata text -> its resolution

    def locate(text: str) -> _Located:
        meta = {k: unescape(v[1:-1]) if v[:1] == '"' else v for k, v in _META_KV.findall(text)}
        frames, funcs = stack(int(meta["stack_frame_id"])) if meta.get("stack_frame_id", "").isdigit() else ((), ())
        if not frames and meta.get("source_file") and meta.get("source_line", "").isdigit():
            frames, funcs = ((meta["source_file"], int(meta["source_line"]), 0),), ("",)
        op_name = meta.get("op_name", "")
        return op_name, primitive_of(op_name) if op_name else "", frames, funcs, pick(frames)

    instrs: dict[int, HloInstr] = {}
    for n, name, opcode, cname, root, attrs in raw:
        meta = _metadata(attrs) if "metadata=" in attrs else ""
        if (loc := located.get(meta)) is None:
            loc = located[meta] = locate(meta)
        called: tuple[str, ...] = ()
        if any(k in attrs for k in _CALL_KEYS):
            called = tuple(x.strip().lstrip("%") for _, v in _CALLS.findall(attrs) for x in v.strip("{}").split(",") if x.strip())
        kind = _KIND.search(attrs) if opcode == "fusion" else None
        instrs[n] = HloInstr(n, name, opcode, cname, *loc, called, kind.group(1) if kind else "", root)

    fusions, fusion_lines, fused = _fusions(instrs, comps)
    computations = {k: HloComputation(k, v[0], v[1], v[2], k in fused) for k, v in comps.items()}
    index = build_index((n, i.user, i.frames) for n, i in instrs.items())
    return HloModuleMap(module, entry, instrs, computations, fusions, index, fusion_lines)


_Raw = tuple[int, str, str, str, bool, str]  # line, name, opcode, computation, root, attributes


def _scan(
    text: str,
) -> tuple[
    dict[str, dict[int, str]], dict[int, dict[str, int]], dict[int, tuple[int, int]], list[_Raw], dict[str, tuple[int, int, bool]], str, str
]:
    """One pass over the text: the name tables, file locations and stack frames at its top, each
    instruction as written, each computation's span, the module's name and its entry."""
    names: dict[str, dict[int, str]] = {"FileNames": {}, "FunctionNames": {}}
    locs: dict[int, dict[str, int]] = {}
    parents: dict[int, tuple[int, int]] = {}  # frame id -> (location id, real parent id)
    raw: list[_Raw] = []
    comps: dict[str, tuple[int, int, bool]] = {}  # name -> (line, end_line, is_entry)
    module, entry, section, comp = "", "", "", ""
    for n, line in enumerate(text.split("\n"), 1):
        line = line.rstrip()
        if section:
            if (r := _ROW_NAME.match(line)) and section in names:
                names[section][int(r.group(1))] = unescape(r.group(2))
                continue
            if r := _ROW_KV.match(line):
                kv = {k: int(v) for k, v in _KV_INT.findall(r.group(2))}
                if section == "FileLocations":
                    locs[int(r.group(1))] = kv
                elif section == "StackFrames":
                    parents[int(r.group(1))] = (kv.get("file_location_id", 0), kv.get("parent_frame_id", 1) - 1)
                continue
            section = ""
        if line in _TABLES:
            section = line
        elif line.startswith("HloModule "):
            module = line[10:].split(",", 1)[0].strip()
        elif not comp and (c := _COMP.match(line)) and (c.group(3) is None or _ARROW.search(c.group(3))):
            comp = c.group(2)
            comps[comp] = (n, n, bool(c.group(1)))
            entry = comp if c.group(1) else entry
        elif comp and line.startswith("}"):
            comps[comp], comp = (comps[comp][0], n, comps[comp][2]), ""
        elif comp and (m := _INSTR.match(line)):
            opcode, attrs = _instr(line, m)
            raw.append((n, m.group(2), opcode, comp, bool(m.group(1)), attrs))
    return names, locs, parents, raw, comps, module, entry


def _fusions(instrs: dict[int, HloInstr], comps: dict[str, tuple[int, int, bool]]) -> tuple[dict[str, HloFusion], dict[int, str], set[str]]:
    """Each top-level fusion with the instructions it holds (nested fused computations too), the
    lines each fusion covers, and the names of the fused computations."""
    by_comp: dict[str, list[HloInstr]] = {}
    for ins in instrs.values():
        by_comp.setdefault(ins.computation, []).append(ins)
    fused = {c for ins in instrs.values() if ins.opcode == "fusion" for c in ins.called}

    def inside(cname: str, seen: set[str]) -> list[HloInstr]:
        out: list[HloInstr] = []
        for ins in by_comp.get(cname, ()):
            if ins.opcode != "parameter":
                out.append(ins)
            if ins.opcode == "fusion":
                for c in ins.called:
                    if c not in seen:
                        seen.add(c)
                        out.extend(inside(c, seen))
        return out

    fusions: dict[str, HloFusion] = {}
    fusion_lines: dict[int, str] = {}
    for ins in instrs.values():
        if ins.opcode == "fusion" and ins.computation not in fused and ins.called:
            seen = {ins.called[0]}
            body = inside(ins.called[0], seen)
            fusions[ins.name] = HloFusion(ins.line, ins.name, ins.fusion_kind, ins.called[0], ins.computation, tuple(body))
            fusion_lines[ins.line] = ins.name
            for span in filter(None, map(comps.get, seen)):  # nested fused computations belong to it too
                fusion_lines.update((k, ins.name) for k in range(span[0], span[1] + 1))
    return fusions, fusion_lines, fused
