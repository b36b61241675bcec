// ctxrules inspect: the page of a store (served) or of one session (exported).
// Session text is untrusted: it only ever enters the page through textContent or an SVG
// text node, never as markup, and the Content-Security-Policy runs no other script.
"use strict";
(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const POLL_MS = 1000;
  // Polls between two reads of the sessions list (new sessions appear within this many seconds).
  const SESSIONS_EVERY = 5;

  // -- building elements without markup ---------------------------------------------------
  function el(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "on") for (const [ev, fn] of Object.entries(value)) node.addEventListener(ev, fn);
      else if (key.startsWith("data-")) node.setAttribute(key, String(value));
      else if (key === "title") node.title = String(value);
      else if (key === "colspan") node.colSpan = Number(value);
      else if (key === "id") node.id = String(value);
      else if (key === "disabled") node.disabled = true;
      else throw new Error("attribute not allowed: " + key);
    }
    for (const kid of kids) add(node, kid);
    return node;
  }
  function add(node, kid) {
    if (kid === null || kid === undefined || kid === false) return;
    if (Array.isArray(kid)) { kid.forEach((k) => add(node, k)); return; }
    node.appendChild(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  function svg(tag, attrs, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "on") for (const [ev, fn] of Object.entries(value)) node.addEventListener(ev, fn);
      else node.setAttribute(key, String(value));
    }
    if (text !== undefined) node.textContent = String(text);
    return node;
  }
  // One formatter: toLocaleString builds a new one on every call, which costs seconds here.
  const numbers = new Intl.NumberFormat("en-US");
  const fmt = (n) => (n === null || n === undefined ? "–" : numbers.format(n));
  const when = (t) => (t ? new Date(t * 1000).toISOString().replace("T", " ").slice(0, 19) : "–");
  const short = (id) => (id && id.length > 14 ? id.slice(0, 14) + "…" : id || "");
  const badge = (cls, text) => el("span", { class: "badge " + cls }, text === undefined ? cls : text);
  // Long lists are grids of rows the browser may skip while they are off screen
  // (content-visibility): a request of 1,400 items lays out in milliseconds, not seconds.
  function grid(cols, attrs, ...kids) {
    const node = el("div", { ...attrs, class: "grid" }, ...kids);
    node.style.setProperty("--cols", cols);
    return node;
  }
  const row = (attrs, ...cells) => el("div", { ...attrs, class: "row " + (attrs.class || "") }, ...cells);
  const cell = (attrs, ...kids) => el("div", { ...attrs, class: "cell " + (attrs.class || "") }, ...kids);
  const head = (names) => row({ class: "head" }, names.map((h) => cell({}, h)));

  // -- where the data comes from: the API, or the exported file -----------------------------
  function apiSource() {
    async function get(path) {
      const response = await fetch(path, { headers: { accept: "application/json" } });
      const body = await response.json();
      if (!response.ok) throw new Error(body.error || response.statusText);
      return body;
    }
    const enc = encodeURIComponent;
    return {
      live: true,
      sessions: () => get("/api/sessions"),
      session: (sid) => get("/api/sessions/" + enc(sid)),
      version: (sid) => get("/api/sessions/" + enc(sid) + "/version"),
      request: (sid, i) => get("/api/sessions/" + enc(sid) + "/requests/" + i),
      node: (sid, id) => get("/api/sessions/" + enc(sid) + "/node?id=" + enc(id)),
      history: (sid, end) => get("/api/sessions/" + enc(sid) + "/history?end=" + end),
    };
  }
  async function embeddedSource(block) {
    const bytes = Uint8Array.from(atob(block.textContent.trim()), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    const data = JSON.parse(await new Response(stream).text());
    const one = async (value) => value;
    return {
      live: false,
      store: data.store,
      sessions: () => one([data.overview.session]),
      session: () => one(data.overview),
      version: () => one(data.overview.version),
      request: (sid, i) => one({ detail: data.requests[i], table: data.table }),
      node: (sid, id) => {
        const found = data.nodes[id];
        return found ? one(found) : Promise.reject(new Error("no node " + id));
      },
      history: () => Promise.reject(new Error("this file holds only the rows shown")),
      omitted: data.omitted || null,
    };
  }

  // -- state -------------------------------------------------------------------------------
  const state = { source: null, sid: null, overview: null, request: null, node: null, version: null, history: null };
  const app = () => document.getElementById("app");

  function section(id, title, cls, ...kids) {
    return el("section", { "data-view": id, class: cls || "" }, el("h2", {}, title), ...kids);
  }
  function replace(id, node) {
    const old = document.querySelector('[data-view="' + id + '"]');
    if (old) old.replaceWith(node);
    else app().appendChild(node);
  }

  // -- sessions ----------------------------------------------------------------------------
  const sessionsKey = (rows) => JSON.stringify(rows.map((r) => [r.id, r.nodes, r.requests, r.cost, r.title]));
  async function showSessions(given) {
    const rows = given || await state.source.sessions();
    state.sessionsKey = sessionsKey(rows);
    const table = el("table", {},
      el("tr", {}, ["session", "title", "format", "nodes", "requests", "first", "last", "cost so far"]
        .map((h, i) => el("th", { class: i === 3 || i === 4 || i === 7 ? "num" : "" }, h))),
      rows.map((row) => el("tr", {
        class: "pick" + (row.id === state.sid ? " chosen" : ""), "data-session": row.id,
        on: { click: () => openSession(row.id) },
      },
      el("td", { class: "mono" }, short(row.id)), el("td", {}, row.title), el("td", {}, row.format),
      el("td", { class: "num" }, fmt(row.nodes)), el("td", { class: "num" }, fmt(row.requests)),
      el("td", {}, when(row.first)), el("td", {}, when(row.last)),
      el("td", { class: "num", title: "cache-weighted prompt cost in uncached input tokens" }, fmt(row.cost)))));
    replace("sessions", section("sessions", "Sessions (" + rows.length + ")", "wide", table));
    return rows;
  }

  // -- history: the DAG --------------------------------------------------------------------
  function showHistory(history) {
    const ROW = 22, LANE = 26, X0 = 18, Y0 = 14;
    const width = X0 + history.lanes * LANE + 14;
    const pos = {};
    for (const n of history.nodes) pos[n.id] = [X0 + n.lane * LANE + (n.callee ? 10 : 0), Y0 + n.row * ROW];
    const height = Y0 + history.nodes.length * ROW;
    const box = svg("svg", { width: width + 520, height: height, "data-nodes": history.nodes.length });
    for (const [from, to, kind] of history.edges) {
      if (!pos[from] || !pos[to]) continue;
      const [x1, y1] = pos[from], [x2, y2] = pos[to];
      const d = x1 === x2 ? `M${x1} ${y1}V${y2}` : `M${x1} ${y1}C${x1} ${y1 + ROW} ${x2} ${y2 - ROW} ${x2} ${y2}`;
      box.appendChild(svg("path", { class: "edge " + kind, d: d, "data-edge": kind }));
    }
    const heads = {};
    for (const [name, id] of Object.entries(history.heads)) (heads[id] = heads[id] || []).push(name);
    for (const n of history.nodes) {
      const [x, y] = pos[n.id];
      if (heads[n.id]) box.appendChild(svg("circle", { class: "head", cx: x, cy: y, r: 10, "data-head": heads[n.id].join(",") }));
      if (n.commit) box.appendChild(svg("circle", { class: "commit", cx: x, cy: y, r: 8 }));
      const open = { click: () => openNode(n.id) };
      const attrs = { class: "node " + n.kind + (state.node && state.node.id === n.id ? " chosen" : ""),
        "data-id": n.id, "data-kind": n.kind, "data-lane": n.lane, on: open };
      let shape;
      if (n.kind === "attach") shape = svg("rect", { ...attrs, x: x - 6, y: y - 6, width: 12, height: 12 });
      else if (n.kind === "merge" || n.kind === "retry" || n.kind === "edit")
        shape = svg("path", { ...attrs, d: `M${x} ${y - 8}L${x + 8} ${y}L${x} ${y + 8}L${x - 8} ${y}Z` });
      else shape = svg("circle", { ...attrs, cx: x, cy: y, r: n.callee ? 5 : 7 });
      shape.appendChild(svg("title", {}, n.kind + " " + n.id));
      box.appendChild(shape);
      const tag = (heads[n.id] ? "[" + heads[n.id].join(",") + "] " : "") + n.kind + "  " + n.label;
      box.appendChild(svg("text", { class: "label", x: width, y: y + 4, "data-label": n.id, on: open }, tag));
    }
    const legend = el("p", { class: "legend" },
      ["user", "assistant", "tool", "system", "retry", "edit", "attach", "merge"].map((k) => el("span", {}, el("i", { class: k }), k)),
      el("span", { class: "muted" }, "red ring: head · thin ring: a commit was built here · dashed: tool call · a new lane: a retry or edit branch"));
    const start = history.start || 0, total = history.total === undefined ? history.nodes.length : history.total;
    const windowed = start > 0 || start + history.nodes.length < total;
    const counts = el("p", { class: "muted" }, (windowed ? "rows " + fmt(start + 1) + "–" + fmt(start + history.nodes.length) + " of " + fmt(total) + " nodes" : fmt(history.nodes.length) + " nodes") +
      ", " + history.lanes + " lane" + (history.lanes === 1 ? "" : "s") + ", heads: " +
      Object.entries(history.heads).map(([k, v]) => k + "=" + short(v)).join(" "));
    const pager = windowed && state.source.live ? el("p", { class: "pager" },
      el("button", { "data-page": "earlier", disabled: start === 0, on: { click: () => pageHistory(start) } }, "◀ earlier " + fmt(Math.min(start, history.nodes.length || start)) + " rows"),
      " ", el("span", { class: "muted", "data-earlier": start }, fmt(start) + " earlier nodes not drawn"), " ",
      el("button", { "data-page": "later", disabled: start + history.nodes.length >= total,
        on: { click: () => pageHistory(Math.min(total, start + 2 * history.nodes.length)) } }, "later rows ▶"),
      " ", el("button", { "data-page": "newest", disabled: start + history.nodes.length >= total, on: { click: () => pageHistory(total) } }, "newest"))
      : windowed ? el("p", { class: "muted", "data-earlier": start }, fmt(start) + " earlier nodes are not in this file") : null;
    replace("history", section("history", "History", "", counts, pager, legend, el("div", { id: "dag" }, box)));
    if (!document.querySelector('[data-view="node"]'))
      replace("node", section("node", "Node", "", el("p", { class: "muted" }, "Click a node of the history, or an item of a request, to see it whole.")));
  }

  async function pageHistory(end) {
    const history = await state.source.history(state.sid, end);
    state.history = history;
    timed("history", showHistory, history);
    document.getElementById("dag").scrollTop = end >= history.total ? document.getElementById("dag").scrollHeight : 0;
  }

  // -- the commit timeline -----------------------------------------------------------------
  const HELD = "A turn-count batch point was weighed here and held back: landing the pending tightening "
    + "would have freed less than the spec's min_gain_of_rewrite of what it makes the provider write again, "
    + "so this request extends the one before and the tightening waits for the next batch point.";
  function showTimeline(requests) {
    const names = ["#", "time", "tokens", "items", "added", "tightened", "folded", "cached prefix", "marks"];
    const table = grid("2.5em 8em 4.5em 3.5em 3.5em 6em 4em 7.5em 1fr", {}, head(names),
      requests.map((r) => row({
        class: "pick" + (state.request === r.index ? " chosen" : ""), "data-request": r.index,
        on: { click: () => openRequest(r.index) },
      },
      cell({ class: "num" }, r.index), cell({ title: when(r.at) }, when(r.at).slice(5)), cell({ class: "num" }, fmt(r.tokens)),
      cell({ class: "num" }, fmt(r.items)), cell({ class: "num" }, r.added),
      cell({ class: "num" }, r.tightened), cell({ class: "num" }, r.folded),
      cell({}, r.index === 0 ? "–" : r.extends ? badge("extends") : badge("break", "breaks at " + r.prefix_end)),
      cell({}, r.batch ? badge("batch", "batch: " + r.batch) : null, " ", r.compaction ? badge("compaction") : null,
        r.held ? el("span", { class: "badge held", "data-held": r.index, title: HELD }, "held back") : null))));
    const earlier = state.overview && state.overview.earlier_requests;
    const moved = state.overview && state.overview.head_moved;
    replace("timeline", section("timeline", "Commit timeline (" + (earlier ? "the newest " : "") + requests.length + " requests)", "",
      earlier ? el("p", { class: "muted", "data-earlier-requests": "1" }, "Earlier requests were not read: this session is longer than the inspector reads at once.") : null,
      moved ? el("p", { class: "moved", "data-head-moved": "1" }, "The head has moved off the newest request's branch (a retry, an edit or a rewind) and no request was built on its branch yet: these requests, and the occupancy, are of the branch it left.") : null,
      el("div", { class: "scroll" }, table)));
  }

  function itemCells(item) {
    return [
      cell({}, badge(item.state)), cell({ class: "num" }, fmt(item.tokens)), cell({}, item.role),
      cell({}, item.reason), cell({ "data-rule": item.rule }, item.rule),
      cell({ class: "mono", "data-handle": item.handle || "" }, item.handle || ""),
      cell({ class: "mono" }, short(item.attached_from)),
    ];
  }

  async function openRequest(index) {
    state.request = index;
    document.querySelectorAll("[data-request]").forEach((tr) => tr.classList.toggle("chosen", Number(tr.dataset.request) === index));
    const latest = state.overview && state.overview.latest;
    const { detail, table } = latest && latest.detail.index === index ? latest : await state.source.request(state.sid, index);
    // A later click (or a live update) chose another request while this one was read.
    if (state.request !== index) return;
    const start = performance.now();
    const diffRows = detail.diff.map((change) => {
      const item = table[change.item], before = change.before === null ? null : table[change.before];
      return row({ class: "pick", "data-change": change.kind, "data-node": item.node, on: { click: () => openNode(item.node) } },
        cell({}, badge(change.kind)), cell({ class: "num" }, change.position),
        cell({ class: "mono" }, short(item.node)),
        cell({}, before ? badge(before.state) : "", " → ", badge(item.state)),
        cell({ class: "num" }, before ? fmt(before.tokens) + " → " + fmt(item.tokens) : fmt(item.tokens)),
        cell({ "data-rule": item.rule }, item.rule || item.reason), cell({}, item.reason),
        cell({ class: "mono", "data-handle": item.handle || "" }, item.handle || ""));
    });
    const diff = grid("6em 3em 9em 10em 8em 9em 7em 1fr", { "data-diff": index },
      head(["change", "pos", "node", "state", "tokens", "rule", "reason", "handle"]), diffRows);
    const items = grid("3em 5.5em 4em 5em 6em 8em 6.5em 7em 1fr", { "data-items": index },
      head(["pos", "state", "tokens", "role", "reason", "rule", "handle", "attached_from", "text"]));
    const first = detail.items_start || 0;
    detail.items.forEach((at, shown) => {
      const position = first + shown;
      // Positions count from the request's first item, not the first one listed.
      if (index > 0 && position === detail.prefix_end)
        items.appendChild(row({ class: "prefix", "data-prefix-end": position },
          cell({}, "— the cached prefix ends here (" + fmt(detail.prefix_tokens) + " tokens of history before it)")));
      const item = table[at];
      items.appendChild(row({ class: "pick", "data-item": position, "data-node": item.node, on: { click: () => openNode(item.node) } },
        cell({ class: "num" }, position), ...itemCells(item),
        cell({ class: "preview" }, item.text + (item.chars > item.text.length ? " …" : ""))));
    });
    const changes = detail.changes_total === undefined ? detail.diff.length : detail.changes_total;
    const said = changes ? fmt(changes) + " changes" + (changes > detail.diff.length ? ", the first " + fmt(detail.diff.length) + " listed" : "") : "no changes";
    const total = detail.items_total === undefined ? detail.items.length : detail.items_total;
    replace("request", section("request", "Request " + index + " · commit " + short(detail.commit), "wide",
      el("h3", {}, (index === 0 ? "The first request" : "Diff against request " + (index - 1)) + " (" + said + (detail.removed ? ", " + detail.removed + " items gone" : "") + ")"),
      index === 0 ? el("p", { class: "muted" }, "The first request: every item is new.") : null,
      el("div", { class: "scroll" }, diff),
      el("h3", {}, "Items (" + fmt(total) + (first > 0 ? "; the newest " + fmt(detail.items.length) + " listed, from position " + fmt(first) : "") + ")"),
      el("div", { class: "scroll" }, items)));
    timing.request = Math.round(performance.now() - start);
  }

  // -- occupancy: the ring and the panel from one record -----------------------------------
  function showOccupancy(record) {
    if (!record) { replace("occupancy", section("occupancy", "Occupancy", "", el("p", { class: "muted" }, "No request prepared yet."))); return; }
    const R = 60, C = 2 * Math.PI * R;
    const ring = svg("svg", { width: 160, height: 160, viewBox: "0 0 160 160", "data-ring": record.total_used });
    let offset = 0;
    const order = ["system", "tools", "history", "summary", "reserve", "free"];
    for (const part of order) {
      const share = Math.max(record.parts[part], 0) / record.window;
      if (share <= 0) continue;
      ring.appendChild(svg("circle", { class: "part " + part, cx: 80, cy: 80, r: R, "stroke-dasharray": share * C + " " + C,
        "stroke-dashoffset": -offset * C, transform: "rotate(-90 80 80)", "data-part": part }));
      offset += share;
    }
    const pct = (100 * record.total_used / record.window).toFixed(1);
    ring.appendChild(svg("text", { class: "ring-text", x: 80, y: 80, "data-used": record.total_used }, pct + " %"));
    ring.appendChild(svg("text", { class: "ring-sub", x: 80, y: 98 }, fmt(record.total_used) + " / " + fmt(record.window)));
    const names = { system: "system prompt", tools: "tool schemas", history: "history", summary: "summary", reserve: "output reserve", free: "free" };
    const panel = el("table", { "data-panel": record.commit },
      order.map((part) => el("tr", {}, el("td", {}, el("span", { class: "swatch " + part }), names[part]),
        el("td", { class: "num", "data-part": part }, fmt(record.parts[part])))),
      el("tr", {}, el("th", {}, "total used"), el("th", { class: "num", "data-total": record.total_used }, fmt(record.total_used))),
      el("tr", {}, el("td", {}, "basis"), el("td", { class: "num", "data-basis": record.basis }, record.basis)),
      el("tr", {}, el("td", {}, "estimated"), el("td", { class: "num" }, fmt(record.estimated))),
      el("tr", {}, el("td", {}, "calibration"), el("td", { class: "num", "data-calibration": record.calibration ?? "" },
        record.calibration === null ? "– (no current measurement)" : record.calibration.toFixed(3))),
      el("tr", {}, el("td", {}, "window"), el("td", { class: "num" }, fmt(record.window) + (record.window_known ? "" : " (assumed)"))),
      el("tr", {}, el("td", {}, "commit " + short(record.commit)), el("td", { class: "num", "data-history": record.history_tokens }, fmt(record.history_tokens) + " tokens")));
    replace("occupancy", section("occupancy", "Occupancy", "", el("div", { class: "ring-wrap" }, ring, panel)));
  }

  // -- a node whole ------------------------------------------------------------------------
  async function openNode(id) {
    state.nodeWanted = id;
    const node = await state.source.node(state.sid, id);
    if (state.nodeWanted !== id) return;  // another node was clicked while this one was read
    state.node = node;
    document.querySelectorAll("svg .node").forEach((n) => n.classList.toggle("chosen", n.dataset.id === id));
    const fields = [["id", node.id], ["kind", node.kind], ["role", node.role], ["name", node.name], ["status", node.status],
      ["seq", node.seq], ["time", when(node.at)], ["predecessor", node.predecessor], ["caller", node.caller]];
    const cut = (k) => (node.cut && node.cut[k] ? " (first " + fmt(node[k].length) + " of " + fmt(node.cut[k]) + " characters)" : "");
    replace("node", section("node", "Node " + short(node.id), "",
      el("dl", { class: "node" }, fields.map(([k, v]) => [el("dt", {}, k), el("dd", { class: "mono" }, v === null || v === "" ? "–" : v)])),
      node.input ? [el("h3", {}, "input" + cut("input")), el("pre", { class: "text", "data-text": "input" }, node.input)] : null,
      el("h3", {}, "output" + cut("output")), el("pre", { class: "text", "data-text": "output" }, node.output),
      el("h3", {}, "metadata"), el("pre", { class: "text" }, JSON.stringify(node.metadata, null, 2))));
  }

  // -- a session, and following it live ------------------------------------------------------
  // How long each view took to build, for the benchmark (bench/inspect_load.py).
  const timing = (window.ctxrulesTiming = {});
  function timed(name, fn, ...args) {
    const start = performance.now();
    const value = fn(...args);
    timing[name] = Math.round(performance.now() - start);
    return value;
  }

  function render(overview, follow) {
    const last = overview.requests.length - 1;
    if (state.request === null || follow) state.request = last >= 0 ? last : null;
    timed("occupancy", showOccupancy, overview.occupancy);
    timed("timeline", showTimeline, overview.requests);
    const paged = state.history && state.history.start + state.history.nodes.length < state.history.total;
    if (!paged) { state.history = overview.history; timed("history", showHistory, overview.history); }
    if (state.request === last) {
      // Following the newest request: show the newest rows and nodes, at the bottom.
      for (const box of document.querySelectorAll('[data-view="timeline"] .scroll, #dag')) box.scrollTop = box.scrollHeight;
    }
    const status = document.getElementById("status");
    if (status) status.remove();
    if (state.request !== null) return openRequest(state.request);
  }

  async function openSession(sid, fromUrl) {
    state.sid = sid; state.request = null; state.node = null; state.history = null;
    if (state.source.live && !fromUrl) {
      // The URL names the session shown, so it can be copied or reloaded.
      history.replaceState(null, "", "#session=" + encodeURIComponent(sid));
      showWhere(null);
    }
    document.querySelectorAll("tr[data-session]").forEach((tr) => tr.classList.toggle("chosen", tr.dataset.session === sid));
    const overview = await state.source.session(sid);
    if (state.sid !== sid) return;  // another session was chosen while this one was read
    state.overview = overview; state.version = overview.version;
    await render(overview, false);
    document.body.dataset.loaded = sid;
  }

  let polls = 0;
  async function poll() {
    polls += 1;
    try {
      // Sessions another writer starts: the list is read again every few seconds.
      if (!state.sid || polls % SESSIONS_EVERY === 0) {
        const rows = await state.source.sessions();
        if (sessionsKey(rows) !== state.sessionsKey) await showSessions(rows);
        if (!state.sid && rows.length) await openSession(rows[rows.length - 1].id);
      }
      if (!state.sid) return;
      const version = await state.source.version(state.sid);
      if (version !== state.version) {
        const overview = await state.source.session(state.sid);
        const following = state.request === state.overview.requests.length - 1;
        state.overview = overview; state.version = overview.version;
        await showSessions();
        await render(overview, following);
      }
      const live = document.getElementById("live");
      const h = state.overview.history;
      live.textContent = "live · " + fmt(h.total === undefined ? h.nodes.length : h.total) + " nodes · checked " + new Date().toLocaleTimeString();
      live.dataset.version = state.version;
    } catch (error) {
      document.getElementById("live").textContent = "live: " + error.message;
    }
  }

  const wantedSession = () => new URLSearchParams(location.hash.slice(1)).get("session");
  async function openWanted(rows) {
    const wanted = wantedSession();
    const pick = rows.find((r) => r.id === wanted) || rows[rows.length - 1];
    const missing = wanted !== null && wanted !== "" && !rows.some((r) => r.id === wanted);
    showWhere(missing ? wanted : null, pick);
    if (pick && pick.id !== state.sid) await openSession(pick.id, true);
  }
  // The header's note: the store (exported file), or that the URL names no session of it.
  function showWhere(missing, pick) {
    const note = document.getElementById("where");
    note.textContent = missing === null ? state.source.store || ""
      : "no session " + JSON.stringify(missing) + " in this store" + (pick ? "; showing the newest, " + short(pick.id) : "");
    note.className = missing === null ? "" : "missing";
    if (missing === null) delete note.dataset.missing; else note.dataset.missing = missing;
  }
  function failed(error) {
    const status = document.getElementById("status") || app().appendChild(el("p", { id: "status" }));
    status.className = "error";
    status.textContent = "Could not load: " + error.message;
  }

  async function start() {
    const block = document.getElementById("ctxrules-data");
    state.source = block ? await embeddedSource(block) : apiSource();
    const rows = await showSessions();
    await openWanted(rows);
    if (!rows.length) document.getElementById("status").textContent = "This store holds no sessions yet.";
    if (state.source.live) {
      setInterval(poll, POLL_MS);
      // Editing the URL's #session=, or going back, opens that session.
      window.addEventListener("hashchange", () => state.source.sessions().then(openWanted).catch(failed));
    }
    document.body.dataset.ready = "1";
  }

  start().catch(failed);
})();
