// jaxscope's interactive graph page (jaxscope/render/html.py writes the data this reads).
// Every string from the program goes into the page through textContent or setAttribute, never as
// markup; nothing here builds code from data.
"use strict";
// a page whose data is damaged (or too big for this browser) says so on the page, not as a blank one
function jaxscopeDamaged(message) {
  if (document.getElementById("damaged")) return;
  const p = document.createElement("p");
  p.id = "damaged";
  p.textContent = "This graph cannot be shown: its data is damaged or too big for this browser (" + message + ").";
  document.body.prepend(p);
  document.body.dataset.ready = "error";
}
window.addEventListener("error", (ev) => jaxscopeDamaged(ev.message));
(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const data = JSON.parse(document.getElementById("jaxscope-data").textContent);
  // a box's row (html.py's page_data), read once into an object with its search text and hover text
  for (const body of Object.values(data.bodies)) {
    body.nodes = body.nodes.map((r) => {
      const [famTitle, fill, stroke] = data.families[r[6]];
      const S = data.strings, text = (i) => S[i], texts = (xs) => xs.map(text);
      const n = { id: r[0], x: r[1], y: r[2], w: r[3], h: r[4], kind: r[5], famTitle: famTitle, fill: fill, stroke: stroke,
        lines: texts(r[7]), subs: r[8], label: text(r[9]), ins: texts(r[10]), outs: texts(r[11]),
        params: r[12].map(([k, v]) => [text(k), text(v)]), detail: text(r[13]), scope: text(r[14]),
        src: r[15] ? [data.files[r[15][0]], r[15][1]] : null };
      n.find = [n.label, n.scope].concat(n.outs, n.ins).join("\n").toLowerCase();
      n.tip = tooltip(n);
      return n;
    });
  }
  function tooltip(n) {  // as svg.node_tooltip writes it
    const out = [`${n.label}  (${n.kind === "eqn" ? n.famTitle : n.famTitle.toLowerCase()})`];
    if (n.kind === "eqn") {
      if (n.ins.length) out.push("in:  " + n.ins.join(", "));
      if (n.outs.length) out.push("out: " + n.outs.join(", "));
      for (const [k, v] of n.params) out.push(`${k}=${v}`);
    } else if (n.outs.length) out.push(n.outs.join(", "));
    if (n.detail) out.push(n.detail);
    if (n.subs.length) out.push("sub-graphs: " + n.subs.map((s) => s[0]).join(", "));
    if (n.scope) out.push("scope: " + scopeText(n.scope));
    if (n.src) out.push(`at ${n.src[0]}:${n.src[1]}`);
    return out.join("\n");
  }
  function scopeText(stack) {  // as svg.scope_text: `transpose(jvp(block1/conv))` -> "block1/conv (backward)"
    let inner = stack, pass = "";
    for (let m; (m = /^(transpose|jvp)\((.*)\)$/.exec(inner)); inner = m[2]) {
      if (m[1] === "transpose") pass = "backward"; else if (m[1] === "jvp" && !pass) pass = "forward";
    }
    return inner && pass ? `${inner} (${pass})` : inner || pass || stack;
  }
  const PAD = 12, TITLE = 18, GAP = 16, CARD = 3;
  const READABLE = 0.9;  // a first view's least scale: 11 px labels 10 px tall, read without zooming
  const state = { open: new Set(data.opened), selected: "", matches: [], at: -1, query: "" };
  const initiallyOpen = new Set(data.opened);  // the address names what the reader opened besides
  const view = { x: 0, y: 0, k: 1, moved: false };  // moved: the reader panned, zoomed or picked (no refit)
  let drawn = null;  // the last composition: boxes by path, clusters, edges

  // ------------------------------------------------------------------ page
  function el(tag, attrs, parent, text) {
    const e = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  const bar = el("div", { id: "bar" }, document.body);
  el("span", { class: "fn" }, bar, data.function);
  const search = el("input", { id: "search", type: "search", placeholder: "find: primitive, scope (block1/up), shape or :line", spellcheck: "false" }, bar);
  const prev = el("button", { id: "prev", title: "previous match (Shift+Enter)" }, bar, "\u25b2");
  const next = el("button", { id: "next", title: "next match (Enter)" }, bar, "\u25bc");
  const count = el("span", { id: "count" }, bar, "");
  const fit = el("button", { id: "fit", title: "the whole drawing (F)" }, bar, "Fit");
  const main = el("div", { id: "main" }, document.body);
  const svg = el("svg:svg", { id: "graph" }, main);
  const world = el("svg:g", { id: "world" }, svg);
  const panel = el("aside", { id: "panel" }, main);
  const tip = el("div", { id: "tip" }, document.body);
  const foot = el("div", { id: "foot" }, document.body);
  document.body.style.background = data.theme.background;
  document.body.style.color = data.theme.text;
  svg.style.fontFamily = data.font.family;

  // ------------------------------------------------------------------ the drawing, composed
  function nodesOf(bodyId) { return data.bodies[bodyId] ? data.bodies[bodyId].nodes : []; }

  // A body laid out with its open nodes in place: each opened box becomes its sub-graphs' frames,
  // side by side, and what lies below it moves down, what lies beside it in its rows moves right.
  function compose(bodyId, prefix, depth) {
    const body = data.bodies[bodyId];
    const items = body.nodes.map((n) => ({ n: n, path: prefix + n.id, x: n.x, y: n.y, w: n.w, h: n.h, subs: null }));
    const order = items.filter((it) => it.n.subs.length && state.open.has(it.path)).sort((a, b) => a.y - b.y || a.x - b.x);
    const grows = [];  // each opened box's growth, in order: the layout's edge routes move as the boxes did
    for (const it of order) {
      const subs = it.n.subs.map(([role, sub], k) => {
        const inner = compose(sub, it.path + ":" + k + "/", depth + 1);
        return { role: role, path: it.path + ":" + k, inner: inner, w: inner.w + 2 * PAD, h: inner.h + PAD + TITLE };
      });
      const W = subs.reduce((s, c) => s + c.w, 0) + GAP * (subs.length - 1);
      const H = subs.reduce((m, c) => Math.max(m, c.h), 0);  // no argument spread: 200k items overflow the stack
      // the frames grow from the box's centre: what lies beside it in its rows moves out by half the
      // growth on each side, what lies below moves down (the edges around it stay about as straight)
      const half = (W - it.w) / 2, dh = H - it.h;
      const top = it.y, bottom = it.y + it.h, left = it.x, right = it.x + it.w;
      grows.push([top, bottom, left, right, half, dh]);
      for (const m of items) {
        if (m === it) continue;
        if (m.y >= bottom - 0.5) m.y += dh;
        else if (m.y < bottom && m.y + m.h > top) {
          if (m.x >= right - 0.5) m.x += half;
          else if (m.x + m.w <= left + 0.5) m.x -= half;
        }
      }
      it.x -= half; it.w = W; it.h = H; it.subs = subs;
    }
    const x0 = items.reduce((m, it) => Math.min(m, it.x), 0);  // (grown past the left edge: all move right)
    let w = 0, h = 0;
    for (const it of items) { it.x -= x0; w = Math.max(w, it.x + it.w); h = Math.max(h, it.y + it.h); }
    return { bodyId: bodyId, items: items, w: w, h: h, depth: depth, grows: grows, x0: x0 };
  }

  // A point of the body's own layout where it lies after its boxes opened (as `compose` moved them).
  function moved(c, x, y) {
    for (const [top, bottom, left, right, half, dh] of c.grows) {
      if (y >= bottom - 0.5) y += dh;
      else if (y > top && y < bottom) {
        if (x >= right - 0.5) x += half;
        else if (x <= left + 0.5) x -= half;
      }
    }
    return [x - c.x0, y];
  }

  // Absolute boxes, frames and edges of a composition at (ox, oy).
  function flatten(c, ox, oy, out, pass) {
    const at = new Map();
    for (const it of c.items) {
      const x = ox + it.x, y = oy + it.y;
      // dx: how far its centre moved (an opened box grows from its centre: the routes to it still end there)
      at.set(it.n.id, { x: x, y: y, w: it.w, h: it.h, dx: ox + it.x + it.w / 2 - (it.n.x + it.n.w / 2) });
      if (!it.subs) { out.boxes.push({ path: it.path, n: it.n, x: x, y: y, w: it.w, h: it.h }); continue; }
      let cx = x;
      for (const s of it.subs) {
        const p = data.passes[s.path] || pass || "";
        out.clusters.push({ path: s.path, owner: it.path, title: s.role, x: cx, y: y, w: s.w, h: s.h, depth: c.depth + 1, pass: p });
        flatten(s.inner, cx + PAD, y + TITLE, out, p);
        cx += s.w + GAP;
      }
    }
    for (const [src, dst, route] of data.bodies[c.bodyId].edges) {
      const a = at.get(src), b = at.get(dst);
      if (!a || !b) continue;
      if (!route) { out.edges.push([a.x + a.w / 2, a.y + a.h, b.x + b.w / 2, b.y]); continue; }
      const pts = [];  // the layout's route round the boxes, moved with them, ending on the box it enters
      for (let i = 0; i < route.length; i += 2) {
        const [x, y] = moved(c, route[i], route[i + 1]);
        pts.push(ox + x, oy + y);
      }
      // (its ends on the boxes where they are now: a box beside an opened one moved with its row)
      pts[0] = route[0] + a.dx; pts[1] = a.y + a.h;
      pts[pts.length - 2] = route[route.length - 2] + b.dx; pts[pts.length - 1] = b.y;
      out.edges.push(pts);
    }
    return out;
  }

  // The page draws what is in view (and half a view round it), not every box: 200k boxes as SVG
  // elements took Chromium over a minute to open and 20 s to answer a search. Past DETAIL boxes in
  // that window (a far zoom), boxes are one outline path per colour, without text.
  const DETAIL = 4000;
  let painted = null;  // the world rectangle drawn now, its scale and whether it is far

  function render() {
    const c = compose(data.root, "", 0);
    drawn = flatten(c, 0, 0, { boxes: [], clusters: [], edges: [] }, "");
    drawn.w = c.w; drawn.h = c.h;
    drawn.byPath = new Map(drawn.boxes.map((b) => [b.path, b]));
    drawn.edgeBounds = drawn.edges.map((e) => {  // a Bezier chain lies inside its points' box
      let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
      for (let i = 0; i < e.length; i += 2) {
        x0 = Math.min(x0, e[i]); x1 = Math.max(x1, e[i]); y0 = Math.min(y0, e[i + 1]); y1 = Math.max(y1, e[i + 1]);
      }
      return [x0, y0, x1 - x0, y1 - y0];
    });
    painted = null;
    foot.textContent = "";
    if (data.overlay) el("span", {}, foot, data.overlay.caption + " (pale: little, dark: much)");
    for (const [name, fill, stroke] of data.legend ? data.families : []) {
      const key = el("span", { class: "key" }, foot);
      const sw = el("span", { class: "swatch" }, key);
      sw.style.background = fill; sw.style.borderColor = stroke;
      key.appendChild(document.createTextNode(name));
    }
    apply();
  }

  // What lies in `win` drawn anew: the clusters, edges and boxes that meet it.
  function paint(win) {
    const meets = (x, y, w, h) => x <= win.x + win.w && x + w >= win.x && y <= win.y + win.h && y + h >= win.y;
    const boxes = drawn.boxes.filter((b) => meets(b.x, b.y, b.w, b.h));
    win.far = boxes.length > DETAIL;
    painted = win;
    drawn.gs = new Map();  // path -> its <g>, for the boxes drawn now: marking touches only what changes
    marked = [];
    while (world.firstChild) world.removeChild(world.firstChild);
    const th = data.theme;
    const gc = el("svg:g", { class: "clusters" }, world);
    for (const k of drawn.clusters) {
      if (!meets(k.x, k.y, k.w, k.h)) continue;
      const fills = k.pass === "backward" ? th.backwardFills : th.clusterFills;
      const g = el("svg:g", { class: "cluster", "data-path": k.path }, gc);
      el("svg:rect", { x: k.x, y: k.y, width: k.w, height: k.h, rx: 6, fill: fills[Math.min(k.depth - 1, fills.length - 1)], stroke: th.clusterBorder }, g);
      const t = el("svg:text", { x: k.x + 8, y: k.y + 13, fill: th.title, class: "ctitle" }, g, "\u25be " + k.title);
      t.addEventListener("click", (ev) => { ev.stopPropagation(); toggle(k.owner); });
    }
    const ge = el("svg:g", { class: "edges", fill: "none", stroke: th.edge }, world);
    const heads = [];  // each edge ends going down into its box: an arrowhead there says which way the data flows
    const far = [];  // far: every edge one path
    drawn.edges.forEach((e, i) => {
      if (!meets(...drawn.edgeBounds[i])) return;
      const n = e.length, x2 = e[n - 2], y2 = e[n - 1];
      let d;
      if (n === 4) {
        const [x1, y1] = e, dy = Math.max(Math.abs(y2 - y1) / 2, 12);
        d = `M${x1},${y1} C${x1},${y1 + dy} ${x2},${y2 - dy} ${x2},${y2}`;
      } else {
        d = `M${e[0]},${e[1]}`;
        for (let j = 2; j + 5 < n; j += 6) d += ` C${e[j]},${e[j + 1]} ${e[j + 2]},${e[j + 3]} ${e[j + 4]},${e[j + 5]}`;
      }
      if (win.far) { far.push(d); return; }
      el("svg:path", { d: d }, ge);
      heads.push(`M${x2 - 3.5},${y2 - 7}L${x2},${y2}L${x2 + 3.5},${y2 - 7}z`);
    });
    if (far.length) el("svg:path", { d: far.join("") }, ge);
    el("svg:path", { class: "arrowheads", d: heads.join(""), fill: th.edge, stroke: "none" }, world);
    const gn = el("svg:g", { class: "nodes" }, world);
    const colours = data.overlay ? data.overlay.colours : null;
    if (win.far) {
      const byFill = new Map();
      for (const b of boxes) {
        const fill = (colours && colours[b.path]) || b.n.fill;
        if (!byFill.has(fill)) byFill.set(fill, []);
        byFill.get(fill).push(`M${b.x},${b.y}h${b.w}v${b.h}h${-b.w}z`);
      }
      for (const [fill, ds] of byFill) el("svg:path", { class: "far", d: ds.join(""), fill: fill, stroke: "none" }, gn);
      el("svg:path", { class: "far-marks", fill: "none" }, world);
    } else for (const b of boxes) drawBox(gn, b, colours);
    mark();
  }

  function drawBox(parent, b, colours) {
    const n = b.n, th = data.theme;
    const g = el("svg:g", { class: "node " + n.kind, "data-path": b.path }, parent);
    drawn.gs.set(b.path, g);
    const fill = (colours && colours[b.path]) || n.fill;
    if (n.kind === "literal") {
      el("svg:ellipse", { cx: b.x + b.w / 2, cy: b.y + b.h / 2, rx: b.w / 2, ry: b.h / 2, fill: fill, stroke: n.stroke }, g);
    } else {
      if (n.subs.length) el("svg:rect", { x: b.x + CARD, y: b.y + CARD, width: b.w, height: b.h, rx: 4, fill: fill, stroke: n.stroke }, g);
      const rx = n.kind === "input" || n.kind === "output" ? Math.min(b.w, b.h) / 2 : 4;
      el("svg:rect", { x: b.x, y: b.y, width: b.w, height: b.h, rx: rx, fill: fill, stroke: n.stroke, class: "box" }, g);
    }
    const top = b.y + b.h / 2 - (n.lines.length * data.font.lineH) / 2;
    // on a measure's colour, the text that reads on it: dark on a pale fill, white on a dark one (in either theme)
    const measured = colours && colours[b.path];
    const ink = measured ? (light(measured) ? ["#1f2328", "#4b5563"] : ["#ffffff", "#f3f4f6"]) : [th.text, th.muted];
    n.lines.forEach((line, i) => {
      el("svg:text", { x: b.x + b.w / 2, y: top + (i + 0.5) * data.font.lineH + 4, "text-anchor": "middle", fill: i || n.kind === "literal" ? ink[1] : ink[0] }, g, line);
    });
    g.addEventListener("mouseenter", () => { tip.textContent = n.tip; tip.style.display = "block"; });
    g.addEventListener("mouseleave", () => { tip.style.display = "none"; });
    g.addEventListener("click", (ev) => { ev.stopPropagation(); select(b.path, false); });
    g.addEventListener("dblclick", (ev) => { ev.stopPropagation(); if (n.subs.length) toggle(b.path); });
  }

  function light(colour) {  // "#rrggbb": its relative luminance above the middle
    const [r, g, b] = [1, 3, 5].map((k) => parseInt(colour.slice(k, k + 2), 16) / 255);
    return 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.55;
  }

  let marked = [];  // the boxes marked now: unmarked first, then the selection and the matches marked
  function mark() {
    if (painted && painted.far) {  // no box of its own: the matches and the selection outlined over them
      const ring = (p) => { const b = drawn.byPath.get(p); return b ? `M${b.x},${b.y}h${b.w}v${b.h}h${-b.w}z` : ""; };
      const marks = world.querySelector("path.far-marks");
      marks.setAttribute("d", state.matches.map(ring).join("") + (state.selected ? ring(state.selected) : ""));
      return;
    }
    for (const g of marked) g.classList.remove("selected", "match");
    marked = [];
    const put = (path, cls) => {
      const g = drawn.gs.get(path);
      if (g) { g.classList.add(cls); marked.push(g); }
    };
    for (const p of state.matches) put(p, "match");
    if (state.selected) put(state.selected, "selected");
  }
  function matchedHere(p) { return state.matchSet && state.matchSet.has(p); }

  // ------------------------------------------------------------------ every node, drawn or not
  let every = null;  // [{path, n, owners: [open paths it needs]}]
  let everyByPath = null;
  function all() {
    if (every) return every;
    every = [];
    const walk = (bodyId, prefix, owners) => {
      for (const n of nodesOf(bodyId)) {
        const path = prefix + n.id;
        every.push({ path: path, n: n, owners: owners });
        n.subs.forEach(([, sub], k) => walk(sub, path + ":" + k + "/", owners.concat([path])));
      }
    };
    walk(data.root, "", []);
    everyByPath = new Map(every.map((e) => [e.path, e]));
    return every;
  }
  function find(path) { all(); return everyByPath.get(path); }

  // ------------------------------------------------------------------ open, select, search
  function toggle(path) {
    if (state.open.has(path)) {
      for (const p of [...state.open]) if (p === path || p.startsWith(path + ":")) state.open.delete(p);
    } else state.open.add(path);
    render(); writeHash();
    if (state.selected === path) showPanel(find(path));  // its button says what a click does now
  }

  function reveal(path) {
    const e = find(path);
    if (!e) return false;
    let changed = false;
    for (const o of e.owners) if (!state.open.has(o)) { state.open.add(o); changed = true; }
    if (changed) render();
    return true;
  }

  function select(path, centre) {
    if (!reveal(path)) return;
    state.selected = path;
    mark(); showPanel(find(path)); writeHash();
    if (centre) centreOn(path);
  }

  function scopeRun(stack, want) {
    const parts = stack.split("/").map((p) => p.replace(/^[a-z_]+\((.*)\)$/, "$1")).join("/").toLowerCase();
    return ("/" + parts + "/").includes("/" + want.replace(/^\/+|\/+$/g, "") + "/");
  }

  function runSearch(text) {
    state.query = text;
    const q = text.trim().toLowerCase();
    let hits = [];
    if (q) {
      const line = q.match(/^:?(\d+)$/);
      hits = all().filter((e) => {
        const n = e.n;
        if (line) return n.src && n.src[1] === Number(line[1]);
        if (q.includes("/")) return scopeRun(n.scope, q);
        return n.find.includes(q);
      });
    }
    state.matches = hits.map((e) => e.path);
    state.matchSet = new Set(state.matches);
    state.at = -1;
    count.textContent = q ? (hits.length ? `${hits.length} matches` : "no match") : "";
    mark(); writeHash();
    if (hits.length) step(1);
  }

  function step(d) {
    if (!state.matches.length) return;
    state.at = (state.at + d + state.matches.length) % state.matches.length;
    count.textContent = `${state.at + 1} of ${state.matches.length}`;
    select(state.matches[state.at], true);
  }

  // ------------------------------------------------------------------ the panel: what a box is
  function realPath(path) {  // (groups sit at any level: a loop's body is grouped too)
    return path.split("/").filter((part) => !/^g\d+$/.test(part.split(":")[0])).join("/");
  }

  function showPanel(e) {
    while (panel.firstChild) panel.removeChild(panel.firstChild);
    if (!e) { panel.style.display = "none"; return; }
    panel.style.display = "block";
    el("h2", {}, panel, e.n.lines[0]);
    el("pre", { class: "facts" }, panel, e.n.tip + "\npath: " + e.path);
    if (e.n.subs.length) {
      const b = el("button", { class: "toggle" }, panel, state.open.has(e.path) ? "Collapse" : "Expand");
      b.addEventListener("click", () => { toggle(e.path); showPanel(find(e.path)); });
    }
    if (e.n.src) {
      const [file, line] = e.n.src;
      el("h3", {}, panel, `${file.split("/").pop()}:${line}`);
      const code = el("pre", { class: "code source" }, panel);
      const lines = data.sources[file] || {};
      const shown = Object.keys(lines).map(Number).filter((k) => Math.abs(k - line) <= 2).sort((a, b) => a - b);
      if (!shown.length) code.textContent = "(the source is not in this page)";
      let before = 0;
      for (const k of shown) {
        if (before && k > before + 1) el("span", { class: "gap" }, code, "    \u22ee\n");  // lines the page does not hold
        before = k;
        const row = el("span", { class: k === line ? "here" : "" }, code, `${String(k).padStart(5)}  ${lines[k]}\n`);
        row.dataset.line = String(k);
      }
    }
    const real = realPath(e.path);
    for (const [stage, entry] of Object.entries(data.stages)) {
      const nums = entry.lines[real] || [];
      if (!nums.length) continue;
      el("h3", {}, panel, stage);
      const pre = el("pre", { class: "code stage-" + stage }, panel);
      let last = 0;
      for (const k of nums.slice(0, 40)) {
        if (last && k > last + 1) el("span", { class: "gap" }, pre, "     \u22ee\n");  // lines of other equations between
        last = k;
        el("span", {}, pre, `${String(k).padStart(6)}  ${entry.text[k] || ""}\n`);
      }
    }
  }

  // ------------------------------------------------------------------ pan and zoom
  // the view's size, kept by an observer (the panel and the window change it): apply() runs at each
  // mouse move of a drag and wheel step, and reading the size there would force a layout each time
  let size = svg.getBoundingClientRect();
  new ResizeObserver(() => { size = svg.getBoundingClientRect(); if (drawn) apply(); }).observe(svg);
  function apply() {
    world.setAttribute("transform", `translate(${view.x},${view.y}) scale(${view.k})`);
    if (!drawn) return;
    const k = view.k;
    const v = { x: -view.x / k, y: -view.y / k, w: Math.max(size.width, 1) / k, h: Math.max(size.height, 1) / k };
    const p = painted;
    const inside = p && v.x >= p.x && v.y >= p.y && v.x + v.w <= p.x + p.w && v.y + v.h <= p.y + p.h;
    if (inside && k < 2 * p.k && k > p.k / 2) return;  // what is in view is drawn, at about this scale
    paint({ x: v.x - v.w / 2, y: v.y - v.h / 2, w: 2 * v.w, h: 2 * v.h, k: k, far: false });
  }
  function fits(r) {  // the scales that show the drawing's whole width, and the whole of it, in `r`
    const wide = (r.width - 32) / Math.max(drawn.w, 1);
    return { wide: wide, whole: Math.min(wide, (r.height - 32) / Math.max(drawn.h, 1), 1.25) };
  }
  function fitAll() {
    const r = svg.getBoundingClientRect();
    view.k = Math.max(fits(r).whole, 0.02);
    view.x = (r.width - drawn.w * view.k) / 2; view.y = 16;
    apply();
  }
  function firstView() {  // readable from the top, as the window opens a graph too big to read whole
    const r = svg.getBoundingClientRect();
    const k = fits(r);
    if (k.whole >= READABLE) return fitAll();
    view.k = Math.max(Math.min(k.wide, 1), READABLE);
    view.x = Math.min(16, (r.width - drawn.w * view.k) / 2); view.y = 16;
    apply();
  }
  function centreOn(path) {
    const b = drawn.byPath.get(path);
    if (!b) return;
    view.moved = true;
    const r = svg.getBoundingClientRect();
    view.k = Math.max(view.k, 0.8);
    view.x = r.width / 2 - (b.x + b.w / 2) * view.k;
    view.y = r.height / 2 - (b.y + b.h / 2) * view.k;
    apply();
  }
  svg.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    view.moved = true;
    const r = svg.getBoundingClientRect(), mx = ev.clientX - r.left, my = ev.clientY - r.top;
    const f = Math.exp(-ev.deltaY * 0.0015), k = Math.min(Math.max(view.k * f, 0.02), 4);
    view.x = mx - ((mx - view.x) * k) / view.k; view.y = my - ((my - view.y) * k) / view.k; view.k = k;
    apply();
  }, { passive: false });
  let drag = null;
  svg.addEventListener("mousedown", (ev) => { drag = { x: ev.clientX - view.x, y: ev.clientY - view.y }; });
  window.addEventListener("mousemove", (ev) => {
    tip.style.left = ev.clientX + 14 + "px"; tip.style.top = ev.clientY + 14 + "px";
    if (drag) { view.x = ev.clientX - drag.x; view.y = ev.clientY - drag.y; view.moved = true; apply(); }
  });
  window.addEventListener("mouseup", () => { drag = null; });

  // ------------------------------------------------------------------ the fragment: #expand= #select= #search=
  function readHash() {
    const params = new URLSearchParams(location.hash.slice(1));
    const opened = state.open.size, asked = new Set();
    for (const scope of (params.get("expand") || "").split(",").filter(Boolean)) {
      const want = scope.toLowerCase();
      for (const e of all()) {
        if (!e.n.subs.length) continue;
        const ends = ("/" + e.n.scope.toLowerCase() + "/").endsWith("/" + want + "/");  // the scope's own group, not those inside it
        if (e.path === scope || ends || e.n.label.toLowerCase().split(" ")[0] === want) {
          for (const o of e.owners) state.open.add(o);
          state.open.add(e.path);
          asked.add(e.path);
        }
      }
    }
    if (state.open.size !== opened) { render(); firstView(); showOpened(asked); }
    if (params.get("search")) { search.value = params.get("search"); runSearch(search.value); }
    if (params.get("select")) select(params.get("select"), true);
  }
  // A link that opened blocks shows the topmost of them from its frames' top (the drawing's top
  // showed the inputs and the edges leaving them, the block far below).
  function showOpened(paths) {
    const frames = drawn.clusters.filter((k) => paths.has(k.owner));
    if (!frames.length) return;
    const owner = frames.reduce((a, b) => (b.y < a.y ? b : a)).owner;
    const own = frames.filter((k) => k.owner === owner);
    const x0 = Math.min(...own.map((k) => k.x)), x1 = Math.max(...own.map((k) => k.x + k.w)), y0 = own[0].y;
    const r = svg.getBoundingClientRect();
    view.moved = true;
    view.x = (x1 - x0) * view.k <= r.width - 32 ? r.width / 2 - ((x0 + x1) / 2) * view.k : 16 - x0 * view.k;
    view.y = 16 - y0 * view.k;
    apply();
  }
  function writeHash() {
    const params = new URLSearchParams();
    if (state.query) params.set("search", state.query);
    if (state.selected) params.set("select", state.selected);
    const opened = [...state.open].filter((p) => !initiallyOpen.has(p));
    if (opened.length) params.set("expand", opened.join(","));
    const text = params.toString();
    try {
      history.replaceState(null, "", text ? "#" + text : location.pathname + location.search);
    } catch (e) {
      // a page in a sandboxed frame (a notebook's, a doc's) has no address of its own to write
    }
  }

  search.addEventListener("keydown", (ev) => {
    if (ev.key !== "Enter") return;
    if (search.value !== state.query) runSearch(search.value); else step(ev.shiftKey ? -1 : 1);
  });
  prev.addEventListener("click", () => step(-1));
  next.addEventListener("click", () => step(1));
  fit.addEventListener("click", fitAll);
  window.addEventListener("keydown", (ev) => { if (ev.target !== search && (ev.key === "f" || ev.key === "F")) fitAll(); });

  render();
  firstView();
  readHash();
  // a link into the page it is on (`#expand=…` in the page's own doc) is followed too
  window.addEventListener("hashchange", readHash);
  // a frame (a doc's, a notebook's) may get its size after the script ran: the first view follows it
  window.addEventListener("resize", () => { if (!view.moved) firstView(); else apply(); });
  document.body.dataset.ready = "1";
  window.jaxscopePage = { state: state, toggle: toggle, select: select, runSearch: runSearch, centre: centreOn, drawn: () => drawn };
})();
