"""IR text -> source locations: StableHLO `loc(...)` (hlo_locations) and compiled-HLO metadata
(hlo_module), on golden texts from real jax (tests/goldens/hlo/make_texts.py) and hand snippets."""

from __future__ import annotations

import pathlib
import random

import pytest

from jaxscope.ir.hlo_locations import default_user_file, parse_stablehlo, primitive_of
from jaxscope.ir.hlo_module import HloModuleMap, parse_hlo
from tests.conftest import line_in

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOLDENS = ROOT / "tests" / "goldens" / "hlo"
SUBJECT = "/src/hlo_subject.py"  # the placeholder make_texts.py writes for the subject's path
CASES = ("nested", "scan", "while", "cond", "fused", "mixed")


def tag(name: str) -> int:
    """The line of hlo_subject.py holding ``# tag: <name>``."""
    lines = (GOLDENS / "hlo_subject.py").read_text(encoding="utf-8").splitlines()
    hits = [i for i, text in enumerate(lines, 1) if text.rstrip().endswith(f"# tag: {name}")]
    assert len(hits) == 1, (name, hits)
    return hits[0]


def stable(case: str) -> tuple[str, object]:
    text = (GOLDENS / f"{case}.stablehlo.mlir").read_text(encoding="utf-8")
    return text, parse_stablehlo(text)


def hlo(case: str) -> tuple[str, HloModuleMap]:
    text = (GOLDENS / f"{case}.hlo.txt").read_text(encoding="utf-8")
    return text, parse_hlo(text)


def line_of(text: str, needle: str, nth: int = 0) -> int:
    return line_in(text, needle, nth)


def instr(m: HloModuleMap, op_name: str) -> list:
    return [i for i in m.instructions.values() if i.op_name == op_name]


def reachable(m: HloModuleMap, comp: str) -> set[str]:
    """Computations reachable from `comp` through calls/to_apply/body/branches."""
    seen, todo = set(), [comp]
    while todo:
        c = todo.pop()
        if c not in seen:
            seen.add(c)
            todo += [x for i in m.instructions.values() if i.computation == c for x in i.called]
    return seen


# ------------------------------------------------------------------------ StableHLO goldens


def test_fused_line_ops_map_to_their_source_line():
    text, m = stable("fused")
    line = tag("fused")
    sine = line_of(text, "stablehlo.sine")
    assert m.ops[sine].name == "jit(fused)/sin" and m.ops[sine].primitive == "sin"
    assert m.ops[sine].op == "stablehlo.sine"
    assert m.source_for_line(sine) == (SUBJECT, line, 11)
    assert m.ops[sine].functions[0] == "fused"
    lines = m.lines_for_source(SUBJECT, line)
    for op in ("stablehlo.sine", "stablehlo.multiply", "stablehlo.add"):
        assert line_of(text, op) in lines
    assert m.lines_for_source("hlo_subject.py", line) == lines  # a shorter path matches too


def test_frames_include_the_caller_of_lower_innermost_first():
    text, m = stable("fused")
    op = m.ops[line_of(text, "stablehlo.sine")]
    assert op.frames[0][:2] == (SUBJECT, tag("fused"))
    assert op.functions[-1] == "<module>" and op.frames[-1][0].endswith("make_texts.py")
    assert len(op.frames) == len(op.functions)


def test_nested_jit_calls_carry_both_jit_names_and_their_call_lines():
    text, m = stable("nested")
    first, second = line_of(text, "call @helper", 0), line_of(text, "call @helper", 1)
    assert m.ops[first].name == m.ops[second].name == "jit(nested)/jit(helper)"
    assert m.ops[first].primitive == "jit"
    assert m.ops[first].user[1] == tag("nested-call-1")
    assert m.ops[second].user[1] == tag("nested-call-2")
    # inside the private @helper function the location holds only the helper's own frame
    cos = m.ops[line_of(text, "stablehlo.cosine")]
    assert (cos.name, cos.user[1], cos.functions) == ("cos", tag("helper"), ("helper",))


def test_scan_ops_appear_under_while_body_and_the_while_line_gets_its_location():
    text, m = stable("scan")
    call = tag("scan-call")
    opening = line_of(text, "stablehlo.while(")
    assert m.ops[opening].op == "stablehlo.while"
    assert m.ops[opening].name == "jit(scan)/while" and m.ops[opening].user[1] == call
    closing = max(n for n, o in m.ops.items() if o.name == "jit(scan)/while" and text.split("\n")[n - 1].lstrip().startswith("}"))
    assert m.ops[closing].op == "stablehlo.while"
    body_call = m.ops[line_of(text, "func.call @closed_call")]
    assert body_call.name == "jit(scan)/while/body/closed_call" and body_call.user[1] == call
    assert m.ops[line_of(text, "stablehlo.compare")].name == "jit(scan)/while/cond/lt"
    mul = m.ops[line_of(text, "stablehlo.multiply")]
    assert (mul.primitive, mul.user[1], mul.functions[0]) == ("mul", tag("scan-body"), "scan.<locals>.body")
    assert opening in m.lines_for_source(SUBJECT, call)


def test_while_loop_cond_and_body_lines():
    text, m = stable("while")
    lt = m.ops[line_of(text, "stablehlo.compare")]
    assert (lt.name, lt.user[1]) == ("jit(while_loop)/while/cond/lt", tag("while-cond"))
    sqrt = m.ops[line_of(text, "stablehlo.sqrt")]
    assert (sqrt.name, sqrt.user[1]) == ("jit(while_loop)/while/body/sqrt", tag("while-body"))
    assert sqrt.frames[1][1] == tag("while-call")  # the body's caller is the while_loop call
    assert m.ops[line_of(text, "stablehlo.while(")].user[1] == tag("while-call")


def test_cond_branches_and_the_case_line():
    text, m = stable("cond")
    case = m.ops[line_of(text, '"stablehlo.case"')]
    assert (case.op, case.name, case.user[1]) == ("stablehlo.case", "jit(cond)/cond", tag("cond-call"))
    log, exp = m.ops[line_of(text, "stablehlo.log")], m.ops[line_of(text, "stablehlo.exponential")]
    assert log.name == "jit(cond)/cond/branch_0_fun/log"  # branch 0 is the false branch
    assert exp.name == "jit(cond)/cond/branch_1_fun/exp"
    assert log.user[1] == exp.user[1] == tag("cond-call") and log.user[2] > exp.user[2]  # two lambdas
    assert log.functions[0] == "cond.<locals>.<lambda>"


def test_arguments_and_unknown_locations():
    text, m = stable("mixed")
    module = m.ops[line_of(text, "module @jit_mixed")]
    assert (module.name, module.frames, module.user) == ("", (), None)
    assert line_of(text, "func.func public @main") in m.ops  # gets its closing "} loc(#loc)"


# --------------------------------------------------------------------- compiled HLO goldens


def test_hlo_fusion_groups_sin_mul_add_of_one_line():
    text, m = hlo("fused")
    line = tag("fused")
    fusion = next(f for f in m.fusions.values() if f.computation == m.entry)
    assert fusion.kind == "kLoop" and m.computations[fusion.fused_computation].is_fused
    located = [i for i in fusion.instructions if i.op_name]
    assert [i.primitive for i in located] == ["sin", "mul", "add"]
    assert {i.user for i in located} == {(SUBJECT, line, 11)}
    assert all(i.opcode != "parameter" for i in fusion.instructions)
    sin = line_of(text, "%sin.")
    assert m.instructions[sin].opcode == "sine" and m.source_for_line(sin) == (SUBJECT, line, 11)
    assert m.fusion_of_line(sin) is fusion and m.fusion_of_line(fusion.line) is fusion
    assert m.fusion_of_line(line_of(text, "parameter(0)", -1)) is None  # an ENTRY parameter
    assert {sin, fusion.line} <= set(m.lines_for_source(SUBJECT, line))


def test_hlo_one_fusion_mixes_top_level_and_nested_jit_ops():
    _, m = hlo("mixed")
    (fusion,) = m.fusions.values()
    names = {i.op_name for i in fusion.instructions if i.op_name}
    assert {"jit(mixed)/tanh", "jit(mixed)/mul"} <= names
    assert {"jit(mixed)/jit(inner)/exp", "jit(mixed)/jit(inner)/sin", "jit(mixed)/jit(inner)/add"} <= names
    assert {i.user[1] for i in fusion.instructions if i.user} == {tag("mixed-top"), tag("inner")}


def test_hlo_stack_frames_resolve_with_the_parent_id_off_by_one():
    _, m = hlo("nested")
    cos = sorted(instr(m, "jit(nested)/jit(helper)/cos"), key=lambda i: i.frames[1][1])
    assert [i.frames[1][1] for i in cos] == [tag("nested-call-1"), tag("nested-call-2")]
    for i in cos:
        assert i.functions == ("helper", "nested", "main", "<module>")
        assert i.frames[0][:2] == (SUBJECT, tag("helper")) and i.user == i.frames[0]
    second = cos[1].line
    assert second in m.lines_for_source(SUBJECT, tag("nested-call-2"), any_frame=True)
    assert cos[0].line not in m.lines_for_source(SUBJECT, tag("nested-call-2"), any_frame=True)
    assert second not in m.lines_for_source(SUBJECT, tag("nested-call-2"))  # user frame is helper's
    x = next(i for i in m.instructions.values() if i.opcode == "parameter" and i.computation == m.entry)
    assert (x.op_name, x.frames, x.user) == ("x", (), None)


def test_hlo_scan_body_ops_live_under_the_while_body():
    _, m = hlo("scan")
    (loop,) = [i for i in m.instructions.values() if i.opcode == "while"]
    assert loop.op_name == "jit(scan)/while" and loop.user[1] == tag("scan-call")
    body = reachable(m, loop.called[-1])  # condition=..., body=...
    (mul,) = instr(m, "jit(scan)/while/body/closed_call/mul")
    assert mul.computation in body and m.computations[mul.computation].is_fused
    assert [f[1] for f in mul.frames[:2]] == [tag("scan-body"), tag("scan-call")]
    assert mul.functions[0] == "scan.<locals>.body"
    fusion = m.fusion_of_line(mul.line)
    assert fusion is not None and fusion.computation in body and mul in fusion.instructions
    # XLA:CPU wraps the while in a call from the entry
    assert any(i.opcode == "call" and loop.computation in i.called for i in m.instructions.values())


def test_hlo_while_loop_cond_and_body():
    _, m = hlo("while")
    (loop,) = [i for i in m.instructions.values() if i.opcode == "while"]
    cond, body = reachable(m, loop.called[0]), reachable(m, loop.called[1])  # condition=, body=
    (lt,) = [i for i in instr(m, "jit(while_loop)/while/cond/lt") if i.opcode == "compare"]
    (sqrt,) = [i for i in instr(m, "jit(while_loop)/while/body/sqrt") if i.opcode == "sqrt"]
    assert lt.computation in cond and sqrt.computation in body
    assert (lt.user[1], sqrt.user[1]) == (tag("while-cond"), tag("while-body"))


def test_hlo_cond_branches_are_branch_computations():
    _, m = hlo("cond")
    (cond,) = [i for i in m.instructions.values() if i.opcode == "conditional"]
    assert cond.computation == m.entry and len(cond.called) == 2
    (log,) = [i for i in instr(m, "jit(cond)/cond/branch_0_fun/log") if i.opcode == "log"]
    (exp,) = [i for i in instr(m, "jit(cond)/cond/branch_1_fun/exp") if i.opcode == "exponential"]
    assert log.computation in reachable(m, cond.called[0]) and exp.computation in reachable(m, cond.called[1])
    assert log.user[1] == exp.user[1] == tag("cond-call")


@pytest.mark.parametrize("case", CASES)
def test_every_golden_parses_and_every_located_line_links_back(case):
    text, s = stable(case)
    _, h = hlo(case)
    assert s.ops and h.instructions and h.entry and h.computations[h.entry].is_entry
    assert h.name == f"jit_{'while_loop' if case == 'while' else case}"
    for m, entries in ((s, s.ops), (h, h.instructions)):
        for n, e in entries.items():
            if e.user:
                assert n in m.lines_for_source(e.user[0], e.user[1])
                assert n in m.lines_for_source(e.user[0], e.user[1], any_frame=True)


# -------------------------------------------------------------------- hand-written StableHLO


def one(expr: str, tail: str = "") -> object:
    """The location of a single op line ending in ``loc(expr)`` (aliases in `tail`)."""
    m = parse_stablehlo(f"  %0 = stablehlo.sine %a : tensor<f32> loc({expr})\n{tail}")
    return m.ops[1]


def test_alias_defined_after_use():
    op = one("#loc3", '#loc3 = loc("jit(f)/sin"(#loc1))\n#loc1 = loc("f"(#loc2))\n#loc2 = loc("a.py":3:4)\n')
    assert (op.name, op.primitive, op.frames, op.functions, op.user) == ("jit(f)/sin", "sin", (("a.py", 3, 4),), ("f",), ("a.py", 3, 4))
    op = one('"a.py":3:4 to 5:6')  # a bare file location: no name, no function
    assert (op.name, op.frames, op.functions) == ("", (("a.py", 3, 4),), ("",))


def test_inline_callsite_chain():
    op = one('"jit(f)/cos"(callsite("g"("a.py":1:2) at callsite("f"("b.py":5:6 to :9) at "<module>"("c.py":7:8 to 9:1))))')
    assert op.frames == (("a.py", 1, 2), ("b.py", 5, 6), ("c.py", 7, 8))
    assert op.functions == ("g", "f", "<module>") and op.name == "jit(f)/cos"


def test_callsite_through_aliases():
    tail = "\n".join(
        [
            '#loc1 = loc("u.py":10:4)',
            '#loc2 = loc("m.py":20:0)',
            '#loc3 = loc("f"(#loc1))',
            '#loc4 = loc("<module>"(#loc2))',
            "#loc5 = loc(callsite(#loc3 at #loc4))",
            '#loc6 = loc("jit(f)/add"(#loc5))',
        ]
    )
    op = one("#loc6", tail)
    assert op.frames == (("u.py", 10, 4), ("m.py", 20, 0)) and op.functions == ("f", "<module>")


def test_fused_locations_take_the_first_name_and_stack():
    op = one('fused["x.py":1:2, "jit(f)/mul"("y.py":3:4)]')
    assert (op.name, op.frames) == ("jit(f)/mul", (("x.py", 1, 2),))
    op = one('fused<"meta<1>">[#a, #b]', '#a = loc(unknown)\n#b = loc("p"("z.py":5:6))\n')
    assert (op.name, op.frames, op.functions) == ("p", (("z.py", 5, 6),), ("p",))


def test_unknown_and_name_without_child():
    assert one("unknown") == one("#loc", "#loc = loc(unknown)\n")
    op = one("unknown")
    assert (op.name, op.primitive, op.frames, op.user) == ("", "", (), None)
    op = one('"x"')
    assert (op.name, op.primitive, op.frames) == ("x", "x", ())
    op = one('"jit(f)/while"')
    assert (op.name, op.primitive) == ("jit(f)/while", "while")


def test_user_file_predicate():
    expr = (
        'callsite("a"("/venv/lib/site-packages/jax/_src/x.py":1:0) at callsite("b"("<frozen runpy>":2:0) at "c"("/home/me/model.py":3:0)))'
    )
    assert one(expr).user == ("/home/me/model.py", 3, 0)
    m = parse_stablehlo(f"%0 = stablehlo.sine %a loc({expr})", user_file=lambda f: f.endswith("x.py"))
    assert m.ops[1].user[0].endswith("jax/_src/x.py")
    assert not default_user_file("/usr/lib/python3/dist-packages/numpy/core.py")
    assert not default_user_file("<string>") and default_user_file("/home/me/jax_model.py")


def test_region_op_location_on_the_closing_line_goes_to_the_opening_line():
    text = "\n".join(
        [
            "    %0:2 = stablehlo.while(%i = %c) : tensor<i32>",
            "    cond {",
            "      stablehlo.return %1 : tensor<i1> loc(#w)",
            "    } do {",
            "      stablehlo.return %1 : tensor<i32> loc(#w)",
            "    } loc(#w)",
            '#w = loc("jit(f)/while"("a.py":4:2))',
        ]
    )
    m = parse_stablehlo(text)
    assert set(m.ops) == {1, 3, 5, 6}
    assert m.ops[1] == m.ops[6] and m.ops[1].op == "stablehlo.while" and m.ops[1].name == "jit(f)/while"


def test_primitive_of():
    assert primitive_of("jit(f)/jit(inner)/sin") == "sin"
    assert primitive_of("jit(f)/vmap(transpose(jvp(blk)))/mul") == "mul"
    assert primitive_of("jit(f)/jit(g)") == primitive_of("jit:") == "jit"


def test_cyclic_and_dangling_aliases_resolve_to_nothing():
    op = one("#a", "#a = loc(#b)\n#b = loc(#a)\n")
    assert (op.name, op.frames) == ("", ())
    assert one("#missing").frames == ()
    deep = "\n".join(f'#l{i} = loc("n{i}"(#l{i + 1}))' for i in range(5000)) + '\n#l5000 = loc("a.py":1:0)'
    assert one("#l0", deep).name == "n0"  # deeper than the resolution limit: no error


# ---------------------------------------------------------------------- hand-written HLO


HLO_SNIPPET = """HloModule m, entry_computation_layout={()->f32[]}

FileNames
1 "u.py"

FunctionNames
1 "f"
2 "g"

FileLocations
1 {file_name_id=1 function_name_id=1 line=10 end_line=10 column=4 end_column=9}
2 {file_name_id=1 function_name_id=2 line=20 end_line=20 column=8 end_column=9}

StackFrames
1 {file_location_id=2 parent_frame_id=1}
2 {file_location_id=1 parent_frame_id=2}
3 {file_location_id=1 parent_frame_id=3}

%inner (p: (f32[2], (s32[], f32[]))) -> f32[] {
  %p = (f32[2]{0}, (s32[], f32[])) parameter(0)
  ROOT %c = f32[] custom-call(%p), custom_call_target="x\\"y", metadata={op_name="jit(g)/sin" source_file="old.py" source_line=7}
}

%fused (a: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %n = f32[] fusion(%a), kind=kLoop, calls=%inner, metadata={op_name="jit(g)/nested" stack_frame_id=2}
  ROOT %t = (f32[], f32[]) tuple(%a, /*index=1*/%n), metadata={op_name="jit(g)/t\\"q" stack_frame_id=3}
}

ENTRY %main () -> f32[] {
  %k = f32[] constant(1)
  ROOT %fu = f32[] fusion(%k), kind=kOutput, calls=%fused, metadata={op_name="jit(g)/t" stack_frame_id=2}
}
"""


def test_hand_written_hlo():
    m = parse_hlo(HLO_SNIPPET)
    lines = HLO_SNIPPET.split("\n")
    at = {i.name: i for i in m.instructions.values()}
    assert (m.name, m.entry) == ("m", "main")
    assert at["p"].opcode == "parameter" and at["c"].opcode == "custom-call" and at["t"].opcode == "tuple"
    assert at["c"].frames == (("old.py", 7, 0),)  # source_file/source_line metadata
    assert at["n"].frames == (("u.py", 10, 4), ("u.py", 20, 8)) and at["n"].functions == ("f", "g")
    # printed parent ids are real + 1: frame 2 -> 1 -> none; frame 3 -> 2 -> 1 -> none
    assert at["t"].op_name == 'jit(g)/t"q' and at["t"].frames == (("u.py", 10, 4), *at["n"].frames)
    assert at["fu"].is_root and at["fu"].fusion_kind == "kOutput" and at["fu"].called == ("fused",)
    assert list(m.fusions) == ["fu"]  # the nested fusion %n is inside fused code
    fu = m.fusions["fu"]
    assert [i.name for i in fu.instructions] == ["n", "c", "t"]  # nested fusion flattened
    assert m.fusion_of_line(lines.index("%inner (p: (f32[2], (s32[], f32[]))) -> f32[] {") + 1) is fu
    assert m.fusion_of_line(at["t"].line) is fu and m.computations["inner"].is_fused
    assert m.fusion_of_line(at["k"].line) is None


def test_hlo_frame_cycles_end():
    text = HLO_SNIPPET.replace(
        "3 {file_location_id=1 parent_frame_id=3}", "3 {file_location_id=1 parent_frame_id=5}\n4 {file_location_id=2 parent_frame_id=5}"
    )
    m = parse_hlo(text)
    t = next(i for i in m.instructions.values() if i.name == "t")
    assert t.frames == (("u.py", 10, 4), ("u.py", 20, 8))  # 3 -> 4 -> 4 (itself): the cycle ends the stack


# ------------------------------------------------------------------------------ robustness


def test_non_str_raises_and_empty_gives_empty_maps():
    with pytest.raises(TypeError):
        parse_stablehlo(b"loc(unknown)")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        parse_hlo(None)  # type: ignore[arg-type]
    assert parse_stablehlo("").ops == {} and parse_hlo("").instructions == {}
    assert parse_hlo("").lines_for_source("a.py", 1) == [] and parse_hlo("").fusion_of_line(1) is None
    assert parse_stablehlo("").source_for_line(3) is None


def test_garbage_never_raises():
    rnd = random.Random(5)
    pieces = []
    for case in CASES:
        pieces += (GOLDENS / f"{case}.stablehlo.mlir").read_text(encoding="utf-8").split("\n")
        pieces += (GOLDENS / f"{case}.hlo.txt").read_text(encoding="utf-8").split("\n")
    alphabet = '()[]{}<>"\\:,=#%@ loc callsite at fused unknown ENTRY ROOT \n0123456789abc'
    for _ in range(200):
        lines = rnd.sample(pieces, 40)
        lines = [ln[: rnd.randrange(len(ln) + 1)] if rnd.random() < 0.3 else ln for ln in lines]
        lines.append("".join(rnd.choice(alphabet) for _ in range(200)))
        text = "\n".join(lines)
        parse_stablehlo(text)
        parse_hlo(text)
    for junk in ("loc(", "loc(((((", '#a = loc("x":)', "%x = f32[ (", "StackFrames\n1 {", "ENTRY %m (", "}\n}\n{", "\x00\ud800"):
        parse_stablehlo(junk)
        parse_hlo(junk)
    long_line = "  %0 = x" + " loc(" * 50_000 + ")"  # many candidates on one line: stays linear
    assert parse_stablehlo(long_line).ops[1].frames == ()
    assert parse_stablehlo("(" * 100_000 + "loc(" + '"a"(' * 10_000 + ")" * 10_001).ops[1].frames == ()


def test_five_megabytes_parse():
    """Linear: a 5 MB synthetic text of each kind completes (no timing assertion)."""
    n = 48_000
    ops = [f"    %{i} = stablehlo.add %{i - 1}, %{i - 1} : tensor<4xf32> loc(#loc{i + 10})" for i in range(n)]
    aliases = [f'#loc{i + 10} = loc("jit(f)/add"(#c{i % 50}))' for i in range(n)]
    frames = [f'#c{j} = loc(callsite("f"("/u/model.py":{j + 1}:4) at "<module>"("/u/run.py":9:0)))' for j in range(50)]
    text = "\n".join(ops + frames + aliases)
    assert len(text) > 5_000_000
    m = parse_stablehlo(text)
    assert len(m.ops) == n and len(m.lines_for_source("/u/model.py", 1)) == n // 50

    n = 27_000
    head = HLO_SNIPPET.split("%inner")[0]
    body = [
        f'  %a.{i} = f32[4]{{0}} add(%a.{i - 1}, %a.{i - 1}), metadata={{op_name="jit(f)/add" stack_frame_id={i % 3 + 1}}}'
        for i in range(n)
    ]
    text = head + "ENTRY %main () -> f32[4] {\n" + "\n".join(body) + "\n}\n"
    text = text + text.replace("ENTRY %main", "%other")
    assert len(text) > 5_000_000
    m = parse_hlo(text)
    assert len(m.instructions) == 2 * n and m.entry == "main" and len(m.computations) == 2
    assert len(m.lines_for_source("u.py", 20, any_frame=True)) == 2 * n
