/* The bridge's web table: a plain-JavaScript socket.io client of vtt-bridge.
 *
 * It knows no ruleset. Everything it shows comes from the server: the rulesets,
 * their steps and declaration schemas from `rulesets.list`, the tokens from
 * `token.list` and the `token.*` broadcasts, each attack from the `attack.step`
 * and `attack.resolved` broadcasts, the questions from `decision` calls. Where
 * rulesets keep their token state in different shapes, a small renderer per
 * shape draws it (TRACKS below); a shape nobody knows is still listed.
 *
 * No build step, no framework: DOM built with h(), text always set as text.
 */
"use strict";

(() => {
  // -- small helpers ---------------------------------------------------------

  const $ = (id) => document.getElementById(id);

  /** Build an element: h("div", {class: "x", onclick: f, dataset: {a: 1}}, child, "text", ...). */
  function h(tag, props, ...children) {
    const el = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "class") el.className = value;
      else if (key === "dataset") {
        for (const [k, v] of Object.entries(value)) if (v !== undefined && v !== null) el.dataset[k] = String(v);
      }
      else if (key === "style") Object.assign(el.style, value);
      else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
      else if (key in el && typeof value !== "string") el[key] = value;
      else el.setAttribute(key, value === true ? "" : String(value));
    }
    append(el, children);
    return el;
  }

  function append(el, children) {
    for (const child of children.flat(Infinity)) {
      if (child === undefined || child === null || child === false) continue;
      el.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return el;
  }

  const human = (name) => String(name).replace(/[_-]+/g, " ");
  const pct = (p) => (p > 0 && p < 0.001 ? "< 0.1%" : `${(100 * p).toFixed(p < 0.1 ? 1 : 0)}%`);
  const sameJSON = (a, b) => JSON.stringify(a) === JSON.stringify(b);

  function toast(message, kind = "info") {
    const el = h("div", { class: `toast ${kind}`, role: kind === "error" ? "alert" : "status" }, message);
    $("toasts").append(el);
    setTimeout(() => el.remove(), kind === "error" ? 8000 : 4000);
  }

  function describeError(error) {
    if (!error) return "unknown error";
    let text = error.message || error.code || "error";
    const details = error.details && typeof error.details === "object" ? flattenDetails(error.details) : [];
    if (details.length) text += ` — ${details.join("; ")}`;
    return text;
  }

  function flattenDetails(details, prefix = "") {
    const out = [];
    for (const [key, value] of Object.entries(details)) {
      const path = prefix ? `${prefix}.${key}` : key;
      if (Array.isArray(value)) out.push(`${path}: ${value.join(" ")}`);
      else if (value && typeof value === "object") out.push(...flattenDetails(value, path));
      else if (!["hook", "step", "plugin"].includes(key)) out.push(`${path}: ${value}`);
    }
    return out;
  }

  function requestId() {
    const bytes = new Uint8Array(12);
    crypto.getRandomValues(bytes);
    return "web-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  // -- state -----------------------------------------------------------------

  const state = {
    socket: null,
    table: null,
    user: null,
    role: null,
    rulesets: new Map(), // id → description from rulesets.list
    tokens: new Map(), // id → token
    sceneRuleset: "",
    zoom: 36, // pixels per scene unit
    fit: true, // fit the zoom to the next scene drawn
    origin: null, // the scene's top-left corner, in scene units
    selected: null, // token id shown in the inspector
    attacker: "",
    targets: [], // in the order chosen
    declaration: null, // {read()} of the generated form
    cards: new Map(), // attack id → card
    pending: [], // this client's attack requests awaiting their first step
    history: [],
    odds: { supported: true, timer: null, asked: 0 },
    decisions: [], // queued {data, ack}
    decision: null, // the one on screen
  };

  const ownLevel = (token) =>
    state.role === "gm" ? 3 : Number(token.ownership?.[state.user] ?? token.ownership?.default ?? 0);
  const canEdit = (token) => ownLevel(token) >= 3;
  const tokenName = (id) => state.tokens.get(id)?.name ?? id;

  // -- the connection ----------------------------------------------------------

  /** Emit with an acknowledgement; a lost ack becomes an error envelope too. */
  async function call(event, data, timeoutMs = 15000) {
    const socket = state.socket;
    if (!socket) return { ok: false, error: { code: "offline", message: "not connected" } };
    try {
      return await socket.timeout(timeoutMs).emitWithAck(event, data ?? {});
    } catch (err) {
      return { ok: false, error: { code: "timeout", message: `no answer to ${event}` } };
    }
  }

  function setStatus(text, stateName) {
    const el = $("status");
    el.textContent = text;
    el.dataset.state = stateName;
  }

  function join(table, key) {
    if (state.socket) state.socket.disconnect();
    $("join-error").textContent = "";
    $("join-button").disabled = true;
    setStatus("connecting", "connecting");
    const socket = io({ auth: { table, key }, reconnectionDelayMax: 5000 });
    state.socket = socket;

    socket.on("connect", async () => {
      setStatus("online", "online");
      try {
        sessionStorage.setItem("vtt-bridge", JSON.stringify({ table, key }));
      } catch (e) {
        /* private mode: no memory, no harm */
      }
      await load();
    });
    socket.on("connect_error", (err) => {
      if (!socket.active) {
        // Refused by the server (bad key): it will not retry.
        const reason = err?.data?.message || err?.message || "refused";
        $("join-error").textContent = `Could not join: ${reason}`;
        $("join").hidden = false;
        $("app").hidden = true;
        $("join-button").disabled = false;
        setStatus("offline", "offline");
        state.socket = null;
      } else {
        setStatus("reconnecting", "connecting");
      }
    });
    socket.on("disconnect", () => setStatus("reconnecting", "connecting"));

    socket.on("attack.step", onStep);
    socket.on("attack.resolved", (data) => onResolved(data.attack));
    socket.on("attack.failed", onFailed);
    socket.on("attack.undone", (data) => onUndone(data.undo));
    socket.on("token.updated", (data) => putToken(data.token));
    socket.on("token.created", (data) => putToken(data.token));
    socket.on("token.deleted", (data) => {
      state.tokens.delete(data.id);
      tokensChanged();
    });
    socket.on("table.updated", (data) => {
      state.table = data.table;
      renderHeader();
    });
    socket.on("decision", (data, ack) => enqueueDecision(data, ack));
    socket.on("decision.closed", onDecisionClosed);
  }

  async function load() {
    const [table, rulesets, tokens] = await Promise.all([
      call("table.get"),
      call("rulesets.list"),
      call("token.list"),
    ]);
    for (const ack of [table, rulesets, tokens]) {
      if (!ack.ok) {
        toast(`Loading the table failed: ${describeError(ack.error)}`, "error");
        return;
      }
    }
    state.table = table.table;
    state.user = table.user;
    state.role = table.role;
    state.rulesets = new Map(rulesets.rulesets.map((r) => [r.id, r]));
    state.tokens = new Map(tokens.tokens.map((t) => [t.id, t]));
    $("join").hidden = true;
    $("app").hidden = false;
    $("join-button").disabled = false;
    $("leave").hidden = false;
    document.body.dataset.role = state.role;
    for (const el of document.querySelectorAll(".gm-only")) el.hidden = state.role !== "gm";
    $("gm-tools").hidden = state.role !== "gm";
    renderHeader();
    fillRulesetSelects();
    tokensChanged();
    refreshHistory();
  }

  function renderHeader() {
    $("table-name").textContent = state.table ? state.table.name : "";
    $("whoami").textContent = state.user ? `${state.user} (${state.role === "gm" ? "GM" : "player"})` : "";
    if (state.table?.settings?.decision_timeout !== undefined && document.activeElement !== $("decision-timeout")) {
      $("decision-timeout").value = state.table.settings.decision_timeout;
    }
  }

  function putToken(token) {
    state.tokens.set(token.id, token);
    tokensChanged();
  }

  function tokensChanged() {
    renderScene();
    renderInspector();
    renderAttackers();
  }

  // -- tracks: a token's health or damage, per data shape ---------------------

  const DAMAGE_MARKS = { B: "/", L: "X", A: "✱" };
  const ASPECTS = ["M", "M", "B", "B", "S", "S"]; // a Warmachine life spiral: mind, body, spirit
  const FLAGS = ["knocked_down", "disabled", "boxed", "destroyed", "removed"];

  function box(marked, label, title, extra = "") {
    return h("span", { class: `box${marked ? " marked" : ""}${extra}`, title }, label ?? "");
  }

  /** Each entry draws one shape of token state; all that match are drawn. */
  const TRACKS = [
    {
      // Exalted 2e health levels: {penalties: [0, -1, ..., "I", "D"], damage: [null, "B", "L", "A"]}.
      name: "health-levels",
      test: (s) => Array.isArray(s.health?.penalties) && Array.isArray(s.health?.damage),
      render(s, full) {
        const taken = s.health.damage.filter(Boolean).length;
        return h(
          "div",
          { class: "track levels", title: `${taken}/${s.health.penalties.length} health levels marked` },
          s.health.penalties.map((penalty, i) => {
            const mark = s.health.damage[i];
            const label = typeof penalty === "number" ? (penalty === 0 ? "−0" : `${penalty}`.replace("-", "−")) : penalty;
            return h(
              "span",
              { class: `level${mark ? " marked" : ""}`, title: `${label}${mark ? `: ${mark} damage` : ""}` },
              box(!!mark, mark ? DAMAGE_MARKS[mark] || mark : "", undefined, mark ? ` dmg-${mark}` : ""),
              full ? h("small", {}, label) : null,
            );
          }),
        );
      },
    },
    {
      // GODSGLOOM and similar: {health: {current, max}}.
      name: "health-points",
      test: (s) => typeof s.health?.current === "number" && typeof s.health?.max === "number",
      render(s) {
        const { current, max } = s.health;
        const pips = max <= 20;
        return h(
          "div",
          { class: "track points", title: `health ${current}/${max}` },
          pips
            ? Array.from({ length: max }, (_, i) => box(i >= current, "", undefined, i < current ? " alive" : ""))
            : h("span", { class: "bar" }, h("span", { style: { width: `${(100 * current) / max}%` } })),
          h("small", {}, `${current}/${max}`),
        );
      },
    },
    {
      // Warmachine damage grid: six columns top down ("-" blank box, letter system box, "." none); marked per column.
      name: "damage-grid",
      test: (s) => Array.isArray(s.grid) && s.grid.length === 6,
      render(s) {
        const marked = Array.isArray(s.marked) ? s.marked : [0, 0, 0, 0, 0, 0];
        const rows = Math.max(...s.grid.map((c) => c.length));
        const columns = s.grid.map((column, c) => {
          let n = 0;
          return h(
            "span",
            { class: "column" },
            h("small", {}, c + 1),
            Array.from({ length: rows }, (_, r) => {
              const ch = column[r] ?? ".";
              if (ch === ".") return h("span", { class: "box none" });
              n += 1;
              return box(n <= marked[c], ch === "-" ? "" : ch, `column ${c + 1}${ch === "-" ? "" : `: ${ch}`}`);
            }),
          );
        });
        return h("div", { class: "track grid", title: `damage grid, ${marked.reduce((a, b) => a + b, 0)} marked` }, columns);
      },
    },
    {
      // Warmachine life spiral: six branches of boxes, marked from the outside in.
      name: "life-spiral",
      test: (s) => Array.isArray(s.spiral) && s.spiral.length === 6,
      render(s) {
        const marked = Array.isArray(s.marked) ? s.marked : [0, 0, 0, 0, 0, 0];
        return h(
          "div",
          { class: "track spiral", title: "life spiral (branches 1–6: mind, body, spirit)" },
          s.spiral.map((count, b) =>
            h(
              "span",
              { class: "branch" },
              h("small", {}, `${b + 1}${ASPECTS[b]}`),
              Array.from({ length: count }, (_, i) => box(i < marked[b], "")),
            ),
          ),
        );
      },
    },
    {
      // A row of damage boxes: {boxes: N, marked: n} (one box: a single-wound model).
      name: "damage-boxes",
      test: (s) => Number.isInteger(s.boxes) && !Array.isArray(s.grid) && !Array.isArray(s.spiral),
      render(s) {
        const marked = Number.isInteger(s.marked) ? s.marked : 0;
        if (s.boxes > 40) {
          return h(
            "div",
            { class: "track boxes", title: `${marked}/${s.boxes} damage` },
            h("span", { class: "bar damage" }, h("span", { style: { width: `${(100 * marked) / s.boxes}%` } })),
            h("small", {}, `${marked}/${s.boxes}`),
          );
        }
        return h(
          "div",
          { class: "track boxes", title: `${marked}/${s.boxes} damage boxes marked` },
          Array.from({ length: s.boxes }, (_, i) => box(i < marked, "")),
        );
      },
    },
    {
      // A plain number of hit points (test rulesets, simple systems).
      name: "hit-points",
      test: (s) => typeof s.hp === "number",
      render: (s) => h("div", { class: "track hp", title: "hit points" }, h("small", {}, `hp ${s.hp}`)),
    },
    {
      // Conditions and state flags, in any ruleset that keeps them.
      name: "conditions",
      test: (s) => (Array.isArray(s.conditions) && s.conditions.length > 0) || FLAGS.some((f) => s[f] === true),
      render(s) {
        const names = [...(Array.isArray(s.conditions) ? s.conditions : []), ...FLAGS.filter((f) => s[f] === true)];
        return h(
          "div",
          { class: "track conditions" },
          names.map((c) => h("span", { class: "condition", dataset: { condition: c } }, human(c))),
        );
      },
    },
  ];

  function renderTrack(system, full = false) {
    const s = system || {};
    const parts = TRACKS.filter((t) => {
      try {
        return t.test(s);
      } catch (e) {
        return false;
      }
    }).map((t) => {
      const el = t.render(s, full);
      el.dataset.track = t.name;
      return el;
    });
    return h("div", { class: "tracks" }, parts);
  }

  // -- the scene -------------------------------------------------------------

  const positional = (rulesetId) => {
    const props = state.rulesets.get(rulesetId)?.token_schema?.properties?.position?.properties;
    return !!(props && props.x && props.y);
  };

  function hasPosition(token) {
    const p = token.system?.position;
    return p && typeof p.x === "number" && typeof p.y === "number";
  }

  /** A token's disc diameter in scene units (a Warmachine base is in millimetres). */
  const diameter = (token) => (Number.isFinite(token.system?.base) ? token.system.base / 25.4 : 1);

  function sceneTokens() {
    const rid = state.sceneRuleset;
    return [...state.tokens.values()]
      .filter((t) => !rid || t.ruleset === rid)
      .sort((a, b) => a.ruleset.localeCompare(b.ruleset) || a.id.localeCompare(b.id));
  }

  /**
   * Where each token stands on the scene, in scene units. Positioned tokens stand at their
   * position; the view starts a little above and left of the nearest one (state.origin, kept
   * while the scene is shown, so a drag does not shift the view). Tokens without a position
   * stand in rows below.
   */
  function layout(tokens) {
    const placed = new Map();
    const positions = tokens.filter((t) => positional(t.ruleset) && hasPosition(t)).map((t) => [t.id, t.system.position]);
    const minX = Math.min(...positions.map(([, p]) => p.x));
    const minY = Math.min(...positions.map(([, p]) => p.y));
    const origin = state.origin;
    if (state.fit || !origin || minX < origin.x || minY < origin.y) {
      state.origin = positions.length
        ? { x: Math.max(0, Math.floor(minX) - 2), y: Math.max(0, Math.floor(minY) - 2) }
        : { x: 0, y: 0 };
    }
    const { x: ox, y: oy } = state.origin;
    let maxX = ox;
    let maxY = oy;
    for (const [id, p] of positions) {
      placed.set(id, { x: p.x, y: p.y, free: true });
      maxX = Math.max(maxX, p.x);
      maxY = Math.max(maxY, p.y);
    }
    const rest = tokens.filter((t) => !placed.has(t.id));
    const top = positions.length ? Math.ceil(maxY) + 3 : oy + 1.5;
    const perRow = 6;
    rest.forEach((t, i) => {
      const spot = { x: ox + 2 + (i % perRow) * 4, y: top + Math.floor(i / perRow) * 4, free: positional(t.ruleset) };
      placed.set(t.id, spot);
      maxX = Math.max(maxX, spot.x);
      maxY = Math.max(maxY, spot.y);
    });
    return { placed, width: Math.max(maxX - ox + 3, 16), height: Math.max(maxY - oy + 3, 10) };
  }

  function renderScene() {
    const scene = $("scene");
    const tokens = sceneTokens();
    const { placed, width, height } = layout(tokens);
    if (state.fit) {
      // A new scene: fit its width to the window, within reason.
      state.fit = false;
      const room = $("scene-wrap").clientWidth - 4;
      if (room > 0) state.zoom = Math.max(18, Math.min(48, Math.floor(room / width)));
    }
    const z = state.zoom;
    scene.style.width = `${width * z}px`;
    scene.style.height = `${height * z}px`;
    scene.style.backgroundSize = `${z}px ${z}px`;
    const rid = state.sceneRuleset;
    $("scene-unit").textContent = rid && positional(rid) ? "1 square = 1 unit · drag to move" : "";
    scene.replaceChildren(
      ...tokens.map((t) => {
        const spot = placed.get(t.id);
        const size = Math.max(diameter(t) * z, 28);
        const classes = ["token"];
        if (canEdit(t)) classes.push("mine");
        if (t.id === state.attacker && t.ruleset === currentRuleset()) classes.push("attacker");
        if (state.targets.includes(t.id) && t.ruleset === currentRuleset()) classes.push("target");
        if (t.id === state.selected) classes.push("selected");
        const disc = h(
          "div",
          {
            class: "disc",
            style: { width: `${size}px`, height: `${size}px`, fontSize: `${Math.max(11, size / 3)}px` },
            title: `${t.name} (${t.ruleset})`,
          },
          initials(t.name),
        );
        const el = h(
          "div",
          {
            class: classes.join(" "),
            dataset: { token: t.id, ruleset: t.ruleset },
            style: { left: `${(spot.x - state.origin.x) * z}px`, top: `${(spot.y - state.origin.y) * z - size / 2}px` },
          },
          disc,
          h("div", { class: "label" }, t.name),
          renderTrack(t.system),
        );
        dragOrClick(el, disc, t, spot.free && canEdit(t));
        return el;
      }),
    );
  }

  const initials = (name) =>
    String(name)
      .split(/\s+/)
      .filter(Boolean)
      .slice(0, 2)
      .map((w) => w[0].toUpperCase())
      .join("");

  /** Pointer handling on a token: a short press selects it, a drag moves it (when allowed). */
  function dragOrClick(el, disc, token, movable) {
    disc.addEventListener("pointerdown", (down) => {
      if (down.button !== 0) return;
      down.preventDefault();
      const startX = down.clientX;
      const startY = down.clientY;
      const left = parseFloat(el.style.left);
      const top = parseFloat(el.style.top);
      let dragging = false;
      disc.setPointerCapture(down.pointerId);
      const move = (ev) => {
        const dx = ev.clientX - startX;
        const dy = ev.clientY - startY;
        if (!dragging && Math.hypot(dx, dy) > 4 && movable) {
          dragging = true;
          el.classList.add("dragging");
        }
        if (dragging) {
          el.style.left = `${left + dx}px`;
          el.style.top = `${top + dy}px`;
        }
      };
      const up = async (ev) => {
        disc.removeEventListener("pointermove", move);
        disc.removeEventListener("pointerup", up);
        disc.removeEventListener("pointercancel", up);
        if (!dragging) {
          select(token.id);
          return;
        }
        el.classList.remove("dragging");
        const z = state.zoom;
        const size = parseFloat(disc.style.width);
        const x = Math.round((parseFloat(el.style.left) / z + state.origin.x) * 10) / 10;
        const y = Math.round(((parseFloat(el.style.top) + size / 2) / z + state.origin.y) * 10) / 10;
        if (ev.type === "pointercancel") return renderScene();
        await moveToken(token.id, Math.max(0, x), Math.max(0, y));
      };
      disc.addEventListener("pointermove", move);
      disc.addEventListener("pointerup", up);
      disc.addEventListener("pointercancel", up);
    });
  }

  async function moveToken(id, x, y) {
    const ack = await call("token.update", { id, system: { position: { x, y } } });
    if (ack.ok) putToken(ack.token);
    else {
      toast(`Could not move ${tokenName(id)}: ${describeError(ack.error)}`, "error");
      renderScene();
    }
  }

  function select(id) {
    state.selected = state.selected === id ? null : id;
    renderScene();
    renderInspector();
  }

  function renderInspector() {
    const panel = $("inspector");
    const token = state.tokens.get(state.selected);
    if (!token) {
      panel.hidden = true;
      return;
    }
    panel.hidden = false;
    const owners = Object.entries(token.ownership || {})
      .filter(([, level]) => level >= 3)
      .map(([user]) => user);
    const sameRuleset = token.ruleset === currentRuleset();
    const isTarget = state.targets.includes(token.id);
    panel.replaceChildren(
      h(
        "header",
        {},
        h("h3", {}, token.name),
        h("span", { class: "hint" }, `${token.id} · ${token.ruleset} · v${token.version} · owner: ${owners.join(", ") || "GM"}`),
        h("button", { type: "button", class: "small", onclick: () => select(token.id) }, "Close"),
      ),
      renderTrack(token.system, true),
      h(
        "div",
        { class: "inline" },
        canEdit(token)
          ? h("button", { type: "button", class: "small", onclick: () => chooseAttacker(token) }, "Attack with it")
          : null,
        token.id !== state.attacker || !sameRuleset
          ? h(
              "button",
              { type: "button", class: "small", onclick: () => toggleTarget(token), dataset: { action: "target" } },
              sameRuleset && isTarget ? "Untarget" : "Target",
            )
          : null,
      ),
      h("details", {}, h("summary", {}, "Sheet (system data)"), h("pre", { class: "sheet" }, JSON.stringify(token.system, null, 1))),
    );
  }

  // -- the attack form ------------------------------------------------------------

  const currentRuleset = () => $("attack-ruleset").value;

  function fillRulesetSelects() {
    const rulesets = [...state.rulesets.values()];
    const counts = new Map();
    for (const t of state.tokens.values()) counts.set(t.ruleset, (counts.get(t.ruleset) || 0) + 1);
    const withTokens = rulesets.filter((r) => counts.get(r.id));
    const preferred =
      (state.sceneRuleset && state.rulesets.has(state.sceneRuleset) && state.sceneRuleset) ||
      withTokens.find((r) => [...state.tokens.values()].some((t) => t.ruleset === r.id && canEdit(t)))?.id ||
      withTokens[0]?.id ||
      rulesets[0]?.id ||
      "";
    $("attack-ruleset").replaceChildren(
      ...rulesets.map((r) => h("option", { value: r.id }, `${r.title} (${counts.get(r.id) || 0})`)),
    );
    $("scene-ruleset").replaceChildren(
      h("option", { value: "" }, "all rulesets"),
      ...rulesets.map((r) => h("option", { value: r.id }, r.title)),
    );
    setRuleset(preferred);
  }

  function setRuleset(id) {
    $("attack-ruleset").value = id;
    $("scene-ruleset").value = id;
    if (state.sceneRuleset !== id) state.fit = true;
    state.sceneRuleset = id;
    state.attacker = "";
    state.targets = [];
    const ruleset = state.rulesets.get(id);
    $("ruleset-description").textContent = ruleset?.description || "";
    const max = ruleset?.targets?.max;
    $("targets-limit").textContent = max && max > 1 ? `(up to ${max})` : "";
    renderAttackers();
    renderScene();
    renderInspector();
  }

  function renderAttackers() {
    const rid = currentRuleset();
    if (!rid) return;
    const mine = [...state.tokens.values()].filter((t) => t.ruleset === rid && canEdit(t)).sort((a, b) => a.name.localeCompare(b.name));
    const select = $("attack-attacker");
    const previous = state.attacker;
    select.replaceChildren(
      h("option", { value: "" }, mine.length ? "— choose —" : "(you own no token of this ruleset)"),
      ...mine.map((t) => h("option", { value: t.id }, t.name)),
    );
    state.attacker = mine.some((t) => t.id === previous) ? previous : mine[0]?.id || "";
    select.value = state.attacker;
    state.targets = state.targets.filter((id) => state.tokens.get(id)?.ruleset === rid && id !== state.attacker);
    renderTargets();
    if (!state.declaration || state.declaration.for !== `${rid}/${state.attacker}`) buildDeclaration();
    else scheduleOdds();
  }

  function chooseAttacker(token) {
    if (token.ruleset !== currentRuleset()) setRuleset(token.ruleset);
    state.attacker = token.id;
    state.targets = state.targets.filter((id) => id !== token.id);
    renderAttackers();
    renderScene();
    renderInspector();
  }

  function toggleTarget(token) {
    if (token.ruleset !== currentRuleset()) setRuleset(token.ruleset);
    const max = state.rulesets.get(token.ruleset)?.targets?.max ?? 1;
    if (state.targets.includes(token.id)) state.targets = state.targets.filter((id) => id !== token.id);
    else if (max <= 1) state.targets = [token.id];
    else if (state.targets.length < max) state.targets = [...state.targets, token.id];
    else toast(`At most ${max} targets`, "error");
    renderTargets();
    renderScene();
    renderInspector();
    scheduleOdds();
  }

  function renderTargets() {
    const rid = currentRuleset();
    const candidates = [...state.tokens.values()]
      .filter((t) => t.ruleset === rid && t.id !== state.attacker)
      .sort((a, b) => a.name.localeCompare(b.name));
    $("attack-targets").replaceChildren(
      ...candidates.map((t) => {
        const on = state.targets.includes(t.id);
        return h(
          "button",
          {
            type: "button",
            class: `chip${on ? " on" : ""}`,
            "aria-pressed": on ? "true" : "false",
            dataset: { token: t.id },
            onclick: () => toggleTarget(t),
          },
          t.name,
        );
      }),
    );
  }

  // -- a form from a JSON Schema (the subset rulesets.list describes) ----------------

  class FormError extends Error {}

  /** Build the declaration fieldset for the current ruleset and attacker. */
  function buildDeclaration() {
    const rid = currentRuleset();
    const schema = state.rulesets.get(rid)?.declaration_schema;
    const attacker = state.tokens.get(state.attacker);
    const fieldset = $("declaration");
    const legend = h("legend", {}, "Declaration");
    if (!schema || !schema.properties || !Object.keys(schema.properties).length) {
      fieldset.replaceChildren(legend, h("p", { class: "hint" }, "This ruleset takes no declaration."));
      state.declaration = { for: `${rid}/${state.attacker}`, read: () => ({}) };
      scheduleOdds();
      return;
    }
    const form = objectFields(schema, { attacker, rid, path: [] });
    fieldset.replaceChildren(legend, ...form.nodes);
    state.declaration = { for: `${rid}/${state.attacker}`, read: () => form.read() ?? {} };
    scheduleOdds();
  }

  function objectFields(schema, ctx) {
    const required = new Set(schema.required || []);
    const fields = Object.entries(schema.properties || {}).map(([name, sub]) =>
      field(name, sub, required.has(name), { ...ctx, path: [...ctx.path, name] }),
    );
    return {
      nodes: fields.map((f) => f.node),
      read() {
        const out = {};
        for (const f of fields) {
          const value = f.read();
          if (value !== undefined) out[f.name] = value;
        }
        return Object.keys(out).length ? out : undefined;
      },
    };
  }

  function weaponChoices(attacker) {
    const weapons = attacker?.system?.weapons;
    if (!Array.isArray(weapons)) return null;
    const choices = weapons
      .filter((w) => w && typeof w === "object" && (w.id || w.name))
      .map((w) => ({ value: String(w.id ?? w.name), label: String(w.name ?? w.id) }));
    return choices.length ? choices : null;
  }

  function field(name, schema, required, ctx) {
    const id = `decl-${ctx.path.join("-")}`;
    const label = human(name);
    const title = schema.description || undefined;
    const def = schema.default;
    const changed = () => scheduleOdds();
    const wrap = (input, cls = "") => h("label", { class: `field ${cls}`, title, for: id }, h("span", {}, label), input);
    const omitDefault = (value) => (!required && def !== undefined && sameJSON(value, def) ? undefined : value);

    // A weapon named on the attacker's sheet: choose from its weapons (by id if they have ids, else by name).
    const weapons = name === "weapon" && schema.type === "string" ? weaponChoices(ctx.attacker) : null;
    if (weapons) {
      const select = h(
        "select",
        { id, onchange: changed, dataset: { field: ctx.path.join(".") } },
        required ? null : h("option", { value: "" }, "(default)"),
        weapons.map((w) => h("option", { value: w.value }, w.label)),
      );
      return { name, node: wrap(select), read: () => (select.value === "" ? undefined : select.value) };
    }
    if (schema.type === "boolean") {
      const input = h("input", { id, type: "checkbox", checked: def === true, onchange: changed, dataset: { field: ctx.path.join(".") } });
      return { name, node: wrap(input, "check"), read: () => omitDefault(input.checked) };
    }
    if (schema.enum) {
      const noDefault = def === undefined || def === null;
      const select = h(
        "select",
        { id, onchange: changed, dataset: { field: ctx.path.join(".") } },
        noDefault ? h("option", { value: "" }, required ? "— choose —" : "(default)") : null,
        schema.enum.map((v) => h("option", { value: JSON.stringify(v) }, String(v))),
      );
      select.value = noDefault ? "" : JSON.stringify(def);
      return {
        name,
        node: wrap(select),
        read() {
          if (select.value === "") {
            if (required) throw new FormError(`${label} is required`);
            return undefined;
          }
          return omitDefault(JSON.parse(select.value));
        },
      };
    }
    if (schema.type === "integer" || schema.type === "number") {
      const input = h("input", {
        id,
        type: "number",
        step: schema.type === "integer" ? "1" : "any",
        min: schema.minimum,
        max: schema.maximum,
        value: def ?? "",
        placeholder: def === null || def === undefined ? "—" : undefined,
        oninput: changed,
        dataset: { field: ctx.path.join(".") },
      });
      return {
        name,
        node: wrap(input, "number"),
        read() {
          if (input.value === "") {
            if (required) throw new FormError(`${label} is required`);
            return undefined;
          }
          const value = Number(input.value);
          if (!Number.isFinite(value) || (schema.type === "integer" && !Number.isInteger(value)))
            throw new FormError(`${label} must be ${schema.type === "integer" ? "a whole number" : "a number"}`);
          return omitDefault(value);
        },
      };
    }
    if (schema.type === "string") {
      const input = h("input", { id, value: typeof def === "string" ? def : "", oninput: changed, dataset: { field: ctx.path.join(".") } });
      return {
        name,
        node: wrap(input),
        read() {
          if (input.value === "") {
            if (required) throw new FormError(`${label} is required`);
            return undefined;
          }
          return omitDefault(input.value);
        },
      };
    }
    if (schema.type === "object" && schema.properties) {
      const inner = objectFields(schema, ctx);
      const node = h("details", { class: "group", title }, h("summary", {}, label), inner.nodes);
      return { name, node, read: () => inner.read() };
    }
    if (schema.type === "array" && schema.items?.type === "string" && !schema.items.enum) {
      // Every plain list of strings in a declaration names tokens (models under a template,
      // allies near the target, the order damage is applied): pick them, in order.
      return tokenList(name, label, title, ctx);
    }
    // Anything else (lists of Charm uses, maps): JSON.
    const area = h("textarea", {
      id,
      rows: 2,
      placeholder: def !== undefined ? JSON.stringify(def) : "JSON",
      oninput: changed,
      dataset: { field: ctx.path.join(".") },
    });
    return {
      name,
      node: wrap(area, "json"),
      read() {
        if (area.value.trim() === "") return undefined;
        try {
          return omitDefault(JSON.parse(area.value));
        } catch (e) {
          throw new FormError(`${label}: not valid JSON`);
        }
      },
    };
  }

  function tokenList(name, label, title, ctx) {
    const chosen = [];
    const box = h("div", { class: "chips small", dataset: { field: ctx.path.join(".") } });
    const draw = () => {
      const tokens = [...state.tokens.values()].filter((t) => t.ruleset === ctx.rid).sort((a, b) => a.name.localeCompare(b.name));
      box.replaceChildren(
        ...tokens.map((t) => {
          const at = chosen.indexOf(t.id);
          return h(
            "button",
            {
              type: "button",
              class: `chip${at >= 0 ? " on" : ""}`,
              dataset: { token: t.id },
              onclick: () => {
                if (at >= 0) chosen.splice(at, 1);
                else chosen.push(t.id);
                draw();
                scheduleOdds();
              },
            },
            at >= 0 ? `${at + 1}. ${t.name}` : t.name,
          );
        }),
      );
    };
    draw();
    const node = h("div", { class: "field tokens", title }, h("span", {}, label), box);
    return { name, node, read: () => (chosen.length ? [...chosen] : undefined) };
  }

  function attackRequest() {
    const ruleset = currentRuleset();
    if (!ruleset) throw new FormError("choose a ruleset");
    if (!state.attacker) throw new FormError("choose an attacker");
    const min = state.rulesets.get(ruleset)?.targets?.min ?? 1;
    if (state.targets.length < min) throw new FormError(min === 1 ? "choose a target" : `choose at least ${min} targets`);
    return {
      ruleset,
      attacker: state.attacker,
      targets: [...state.targets],
      declaration: state.declaration ? state.declaration.read() : {},
    };
  }

  async function submitAttack(ev) {
    ev.preventDefault();
    $("attack-error").textContent = "";
    let request;
    try {
      request = attackRequest();
      if (state.role === "gm") {
        const dice = $("attack-dice").value.trim();
        if (dice) {
          const faces = dice.split(/[\s,;]+/).map(Number);
          if (faces.some((f) => !Number.isInteger(f) || f < 1)) throw new FormError("scripted faces are whole numbers from 1");
          request.dice = faces;
        }
        const seed = $("attack-seed").value.trim();
        if (seed) request.seed = Number(seed);
      }
    } catch (err) {
      if (!(err instanceof FormError)) throw err;
      $("attack-error").textContent = err.message;
      return;
    }
    request.request_id = requestId();
    const button = $("attack-button");
    button.disabled = true;
    button.textContent = "Rolling…";
    const mine = { ruleset: request.ruleset, attacker: request.attacker, targets: request.targets, user: state.user };
    state.pending.push(mine);
    // An attack waits for every decision it asks: give it as long as the answers may take.
    const ack = await call("attack", request, 30 * 60 * 1000);
    state.pending = state.pending.filter((p) => p !== mine);
    button.disabled = false;
    button.textContent = "Roll the attack";
    if (ack.ok) {
      onResolved(ack.attack);
    } else {
      $("attack-error").textContent = describeError(ack.error);
      if (mine.card) failCard(mine.card, ack.error);
    }
  }

  // -- odds before the roll ---------------------------------------------------------------

  function scheduleOdds() {
    clearTimeout(state.odds.timer);
    state.odds.timer = setTimeout(fetchOdds, 350);
  }

  async function fetchOdds() {
    const body = $("odds-body");
    if (!state.odds.supported) return;
    let request;
    try {
      request = attackRequest();
    } catch (err) {
      if (!(err instanceof FormError)) throw err;
      body.className = "hint";
      body.replaceChildren(err.message.startsWith("choose") ? "Choose an attacker and a target." : err.message);
      return;
    }
    const asked = ++state.odds.asked;
    body.className = "hint";
    body.replaceChildren("Working out the odds…");
    const ack = await call("attack.odds", request, 30000);
    if (asked !== state.odds.asked) return; // the form changed meanwhile
    if (ack.ok) {
      body.className = "";
      body.replaceChildren(renderOdds(ack.odds ?? ack));
    } else if (ack.error?.code === "invalid_request" && ack.error.details?.event) {
      // This server has no odds engine on the wire.
      state.odds.supported = false;
      $("odds").dataset.unsupported = "";
      body.replaceChildren("This server does not offer odds (no attack.odds event).");
    } else {
      body.className = "hint error";
      body.replaceChildren(`No odds: ${describeError(ack.error)}`);
    }
  }

  const estimate = (e) => (e && typeof e === "object" ? Number(e.value) : Number(e));

  function renderOdds(odds) {
    const hit = estimate(odds.hit);
    const unit = odds.unit || "damage";
    const damage = (odds.damage || []).map((d) => ({ damage: d.damage, p: estimate(d) }));
    const top = Math.max(...damage.map((d) => d.p), 0.0001);
    const W = 300;
    const H = 90;
    const barW = damage.length ? Math.min(28, (W - 10) / damage.length) : 0;
    const svgNS = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(svgNS, "svg");
    svg.setAttribute("viewBox", `0 0 ${W} ${H + 16}`);
    svg.setAttribute("class", "odds-chart");
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", `damage distribution in ${unit}`);
    damage.forEach((d, i) => {
      const height = Math.max(1, (d.p / top) * H);
      const rect = document.createElementNS(svgNS, "rect");
      rect.setAttribute("x", String(5 + i * barW));
      rect.setAttribute("y", String(H - height));
      rect.setAttribute("width", String(Math.max(1, barW - 2)));
      rect.setAttribute("height", String(height));
      rect.setAttribute("class", d.damage === 0 ? "miss" : "dmg");
      const tip = document.createElementNS(svgNS, "title");
      tip.textContent = `${d.damage} ${unit}: ${pct(d.p)}`;
      rect.append(tip);
      svg.append(rect);
      if (damage.length <= 16 || i % Math.ceil(damage.length / 16) === 0) {
        const label = document.createElementNS(svgNS, "text");
        label.setAttribute("x", String(5 + i * barW + (barW - 2) / 2));
        label.setAttribute("y", String(H + 12));
        label.setAttribute("text-anchor", "middle");
        label.textContent = String(d.damage);
        svg.append(label);
      }
    });
    const conditions = (odds.conditions || []).filter((c) => estimate(c) > 0);
    return h(
      "div",
      { class: "odds-result" },
      h(
        "div",
        { class: "hit-line" },
        h("strong", { class: "hit-chance" }, `Hit ${pct(hit)}`),
        h("span", { class: "hint" }, ` · mean ${estimate(odds.expected_damage).toFixed(2)} ${unit}`),
      ),
      h("div", { class: "meter", title: `hit ${pct(hit)}` }, h("span", { style: { width: `${100 * hit}%` } })),
      damage.length ? svg : null,
      damage.length ? h("div", { class: "hint" }, `${human(unit)} dealt (bars: chance of each)`) : null,
      conditions.length
        ? h("ul", { class: "odds-conditions" }, conditions.map((c) => h("li", {}, `${tokenName(c.token)} ${human(c.condition)}: ${pct(estimate(c))}`)))
        : null,
      h("div", { class: "hint small" }, odds.method === "exact" ? "exact" : `Monte Carlo${odds.samples ? `, ${odds.samples} samples` : ""}`),
    );
  }

  // -- the chat: attack cards --------------------------------------------------------------

  function ensureCard(id, about) {
    let card = state.cards.get(id);
    if (!card) {
      // A card whose first step arrives before we know more: if this client has an
      // attack of its own waiting for its first step, this is it.
      if (!about) {
        const mine = state.pending.find((p) => !p.card);
        if (mine) {
          about = mine;
          mine.card = id;
        }
      }
      const steps = h("ol", { class: "steps" });
      const head = h("header", {});
      const foot = h("footer", {});
      const el = h("article", { class: "card", dataset: { attack: id, status: "running" } }, head, steps, foot);
      card = { id, el, head, steps, foot, about: null, stepItems: new Map(), status: "running" };
      state.cards.set(id, card);
      $("chat").prepend(el);
    }
    if (about && (!card.about || about.authoritative)) card.about = about;
    renderCardHead(card);
    return card;
  }

  function renderCardHead(card) {
    card.el.dataset.status = card.status;
    const a = card.about;
    const ruleset = a ? state.rulesets.get(a.ruleset) : null;
    const status = { running: "rolling…", resolved: "resolved", failed: "failed", undone: "undone" }[card.status];
    card.head.replaceChildren(
      h(
        "div",
        { class: "who" },
        a ? h("strong", {}, tokenName(a.attacker)) : h("strong", {}, "Attack"),
        a ? " → " : null,
        a ? a.targets.map(tokenName).join(", ") : null,
      ),
      h(
        "div",
        { class: "meta" },
        ruleset ? ruleset.title : a?.ruleset || "",
        a?.user ? ` · by ${a.user}` : "",
        h("span", { class: `badge ${card.status}` }, status),
      ),
    );
  }

  function onStep(data) {
    // Every step says whose attack it is, so the card is titled from its first step.
    const about = data.ruleset
      ? { ruleset: data.ruleset, attacker: data.attacker, targets: data.targets, user: data.user, authoritative: true }
      : null;
    const card = ensureCard(data.attack, about);
    addStep(card, data.index, data.step);
    closeDecisionIfSettled(data.attack, data.step);
  }

  function addStep(card, index, step) {
    if (card.stepItems.has(index)) return;
    const li = renderStep(step);
    li.dataset.index = index;
    // Keep the steps in trace order whatever order they are drawn in.
    const after = [...card.stepItems.entries()].filter(([i]) => i > index).sort((a, b) => a[0] - b[0])[0];
    if (after) card.steps.insertBefore(li, after[1]);
    else card.steps.append(li);
    card.stepItems.set(index, li);
    card.el.scrollIntoView({ block: "nearest" });
  }

  /** A change or note made by a pack (named), not by a ruleset's own plugin (left unnamed). */
  const packPlugin = (plugin) => !!plugin && !state.rulesets.has(plugin);

  function renderStep(step) {
    return h(
      "li",
      { class: `step${step.ended ? " ended" : ""}`, dataset: { step: step.step } },
      h("div", { class: "step-title" }, step.title || human(step.step), step.item ? h("span", { class: "item" }, ` — ${tokenName(step.item)}`) : null),
      (step.rolls || []).map(renderRoll),
      step.changes?.length
        ? h(
            "ul",
            { class: "changes" },
            step.changes.map((c) =>
              h(
                "li",
                { title: c.plugin ? `by ${c.plugin}` : undefined },
                h("span", { class: "number" }, human(c.number)),
                ` ${formatValue(c.from)} → `,
                h("strong", {}, formatValue(c.to)),
                packPlugin(c.plugin) ? h("span", { class: "plugin" }, ` ${c.plugin}`) : null,
              ),
            ),
          )
        : null,
      step.notes?.length
        ? h("ul", { class: "notes" }, step.notes.map((n) => h("li", {}, n.text, packPlugin(n.plugin) ? h("span", { class: "plugin" }, ` (${n.plugin})`) : null)))
        : null,
      step.decisions?.length ? h("div", { class: "asked" }, "asked: ", step.decisions.map((d) => h("span", { class: "chip tiny" }, human(d)))) : null,
      step.children?.length ? step.children.map(renderNested) : null,
      step.ended ? h("div", { class: "ended-line" }, `ends: ${human(step.ended)}`) : null,
    );
  }

  function renderNested(child) {
    return h(
      "section",
      { class: "nested" },
      h(
        "div",
        { class: "nested-title" },
        `${human(child.kind || "nested attack")}: `,
        h("strong", {}, tokenName(child.attacker)),
        " → ",
        (child.targets || []).map(tokenName).join(", "),
      ),
      h("ol", { class: "steps" }, (child.steps || []).map((s) => renderStep(s))),
      child.outcome ? renderOutcomeLine(child.outcome, child.ended) : null,
    );
  }

  function formatValue(v) {
    if (v === null || v === undefined) return "—";
    if (typeof v === "object") return JSON.stringify(v);
    return String(v);
  }

  /** One roll, die by die: successes marked, doubles counted, discarded and rerolled dice struck through. */
  function renderRoll(roll) {
    const terms = (roll.terms || []).map((term) => {
      if (term.class === "OperatorTerm") return h("span", { class: "op" }, ` ${term.operator} `);
      if (term.class === "NumericTerm") return h("span", { class: "num" }, String(term.number));
      if (!Array.isArray(term.results)) return h("span", { class: "num" }, term.formula || "");
      return h(
        "span",
        { class: "term", title: term.formula },
        term.results.map((r) => {
          const classes = ["die", `d${term.faces}`];
          const states = [];
          if (r.success) classes.push("success"), states.push(r.count > 1 ? `success ×${r.count}` : "success");
          if (r.failure) classes.push("failure"), states.push("failure");
          if (r.discarded) classes.push("discarded"), states.push("discarded");
          if (r.rerolled) classes.push("rerolled"), states.push("rerolled");
          if (r.exploded) classes.push("exploded"), states.push("exploded");
          if (r.active === false && !r.discarded && !r.rerolled) classes.push("inactive");
          if (r.count > 1) classes.push("double");
          return h(
            "span",
            { class: classes.join(" "), title: `d${term.faces}: ${r.result}${states.length ? ` (${states.join(", ")})` : ""}`, dataset: { face: r.result } },
            String(r.result),
          );
        }),
      );
    });
    const successes = (roll.terms || []).some((t) => (t.modifiers || []).some((m) => /^c[sf]/.test(m)));
    return h(
      "div",
      { class: "roll" },
      h("div", { class: "roll-head" }, h("span", { class: "flavor" }, roll.options?.flavor || "roll"), h("code", {}, roll.formula || "")),
      h("div", { class: "dice" }, terms, h("span", { class: "total" }, `= ${roll.total}${successes ? (roll.total === 1 ? " success" : " successes") : ""}`)),
    );
  }

  function renderOutcomeLine(outcome, ended) {
    const conditions = Object.entries(outcome.conditions || {})
      .filter(([, list]) => Array.isArray(list) && list.length)
      .map(([token, list]) => `${tokenName(token)}: ${list.map(human).join(", ")}`);
    return h(
      "div",
      { class: `outcome ${outcome.hit ? "hit" : "miss"}` },
      h("strong", {}, outcome.hit ? "Hit" : "Miss"),
      outcome.hit || outcome.damage ? ` · damage ${outcome.damage}` : null,
      ended && ended !== "miss" ? ` · ${human(ended)}` : null,
      conditions.length ? h("span", { class: "conditions" }, ` · ${conditions.join("; ")}`) : null,
    );
  }

  function onResolved(attack) {
    if (!attack || !attack.id) return;
    const about = { ruleset: attack.ruleset, attacker: attack.attacker, targets: attack.targets, user: attack.user, authoritative: true };
    const card = ensureCard(attack.id, about);
    (attack.steps || []).forEach((step, i) => addStep(card, i, step));
    if (card.status === "running") card.status = "resolved";
    card.attack = attack;
    renderCardHead(card);
    renderCardFoot(card);
    closeDecisionIfSettled(attack.id, null);
    scheduleHistory();
  }

  function renderCardFoot(card) {
    const attack = card.attack;
    if (!attack) return;
    // Tokens whose track the attack changed (motes spent and the like show on the sheet, not here).
    const tokens = Object.entries(attack.tokens || {}).filter(
      ([, t]) => t.after && t.before && renderTrack(t.before.system).outerHTML !== renderTrack(t.after.system).outerHTML,
    );
    const decisions = attack.decisions || [];
    card.foot.replaceChildren(
      renderOutcomeLine(attack.outcome || {}, attack.ended),
      decisions.length
        ? h(
            "ul",
            { class: "decisions" },
            decisions.map((d) => {
              const chosen = (d.options || []).find((o) => o.id === d.answer?.option);
              return h(
                "li",
                { dataset: { decision: d.key } },
                h("span", { class: "hint" }, `${tokenName(d.token)}: ${d.prompt} `),
                h("strong", {}, chosen?.label || d.answer?.option || "—"),
                d.answer?.params && Object.keys(d.answer.params).length
                  ? ` (${Object.entries(d.answer.params).map(([k, v]) => `${human(k)} ${v}`).join(", ")})`
                  : null,
                d.how && d.how !== "answered" ? h("span", { class: "how" }, ` (${d.how})`) : null,
              );
            }),
          )
        : null,
      tokens.length
        ? h(
            "div",
            { class: "changed-tokens" },
            tokens.map(([id, t]) => h("div", { class: "changed", dataset: { token: id } }, h("span", {}, t.after.name), renderTrack(t.after.system))),
          )
        : null,
      h(
        "div",
        { class: "card-tools" },
        // (The seed is a 63-bit integer: JavaScript cannot show it exactly, so it is not shown.)
        h("span", { class: "hint" }, `${attack.dice === "scripted" ? "scripted dice" : "seeded dice"}${attack.seq ? ` · #${attack.seq}` : ""}`),
        state.role === "gm" && card.status === "resolved"
          ? h("button", { type: "button", class: "small undo", onclick: () => undo(attack.id) }, "Undo")
          : null,
      ),
    );
  }

  function failCard(id, error) {
    const card = ensureCard(id);
    card.status = "failed";
    renderCardHead(card);
    card.foot.replaceChildren(h("div", { class: "error" }, describeError(error)));
  }

  function onFailed(data) {
    failCard(data.id, data.error);
    closeDecisionIfSettled(data.id, null);
  }

  function onUndone(undo) {
    const card = state.cards.get(undo.attack);
    if (card) {
      card.status = "undone";
      renderCardHead(card);
      renderCardFoot(card);
    }
    for (const t of Object.values(undo.tokens || {})) if (t.after) putToken(t.after);
    scheduleHistory();
  }

  async function undo(id) {
    const ack = await call("attack.undo", { id });
    if (ack.ok) {
      toast(`Attack undone (#${ack.undo.seq})`);
      onUndone(ack.undo);
    } else toast(`Undo refused: ${describeError(ack.error)}`, "error");
  }

  // -- history (the audit log) ------------------------------------------------------------------

  function scheduleHistory() {
    clearTimeout(state.historyTimer);
    state.historyTimer = setTimeout(refreshHistory, 300);
  }

  async function refreshHistory() {
    const ack = await call("attack.history", { limit: 50 });
    if (!ack.ok) {
      $("history").replaceChildren(h("li", { class: "error" }, describeError(ack.error)));
      return;
    }
    state.history = ack.attacks;
    const undone = new Set(ack.attacks.filter((e) => e.kind === "undo").map((e) => e.id));
    const all = $("history-all").checked;
    const undoneAttack = (id) => {
      const attack = ack.attacks.find((a) => a.kind === "attack" && a.id === id);
      return attack ? `#${attack.seq} ${tokenName(attack.attacker)} → ${(attack.targets || []).map(tokenName).join(", ")}` : id;
    };
    $("history").replaceChildren(
      ...ack.attacks.filter((e) => all || e.kind === "attack" || e.kind === "undo").map((e) => {
        const isAttack = e.kind === "attack";
        const line = isAttack
          ? [
              h("strong", {}, tokenName(e.attacker)),
              " → ",
              (e.targets || []).map(tokenName).join(", "),
              h("span", { class: `result ${e.outcome?.hit ? "hit" : "miss"}` }, e.outcome?.hit ? ` hit, ${e.outcome.damage}` : " miss"),
            ]
          : e.kind === "undo"
            ? ["undo of ", undoneAttack(e.id)]
            : [human(e.kind), e.id ? ` ${tokenName(e.id)}` : ""];
        return h(
          "li",
          { class: `entry ${e.kind.replace(".", "-")}${undone.has(e.id) && isAttack ? " undone" : ""}`, dataset: { seq: e.seq, attack: isAttack ? e.id : undefined } },
          h("span", { class: "seq" }, `#${e.seq}`),
          h("span", { class: "what" }, line),
          h("span", { class: "by hint" }, ` ${e.user}`),
          isAttack ? h("button", { type: "button", class: "small", onclick: () => showAttack(e.id) }, "Card") : null,
          isAttack && state.role === "gm" && !undone.has(e.id)
            ? h("button", { type: "button", class: "small undo", onclick: () => undo(e.id) }, "Undo")
            : null,
        );
      }),
    );
  }

  async function showAttack(id) {
    const ack = await call("attack.get", { id });
    if (!ack.ok) return toast(describeError(ack.error), "error");
    onResolved(ack.attack);
    const card = state.cards.get(id);
    if (ack.undone && card) {
      card.status = "undone";
      renderCardHead(card);
      renderCardFoot(card);
    }
    card?.el.scrollIntoView({ block: "nearest" });
    card?.el.classList.add("flash");
    setTimeout(() => card?.el.classList.remove("flash"), 1200);
  }

  // -- decisions: the rules ask this user something --------------------------------------------

  function enqueueDecision(data, ack) {
    state.decisions.push({ data, ack, received: performance.now() });
    if (!state.decision) nextDecision();
  }

  function nextDecision() {
    const item = state.decisions.shift();
    state.decision = item || null;
    const dialog = $("decision");
    if (!item) {
      if (dialog.open) dialog.close();
      return;
    }
    const { data } = item;
    const attack = data.attack || {};
    if (attack.id) ensureCard(attack.id, attack.attacker ? attack : undefined);
    $("decision-context").textContent = `${tokenName(data.token)} · ${tokenName(attack.attacker)} attacks ${(attack.targets || []).map(tokenName).join(", ")}`;
    $("decision-prompt").textContent = data.prompt || human(data.name);
    dialog.dataset.decision = data.key;
    $("decision-options").replaceChildren(
      ...(data.options || []).map((option) => {
        // option.params is a JSON Schema object: one typed property per value the answer may carry.
        const params = Object.entries(option.params?.properties || {}).map(([name, schema]) => ({
          name,
          input: h("input", {
            type: schema.type === "integer" || schema.type === "number" ? "number" : "text",
            min: schema.minimum, max: schema.maximum, step: schema.type === "integer" ? 1 : undefined,
            placeholder: schema.title || human(name), title: schema.description || "",
            "aria-label": `${schema.title || human(name)}${schema.description ? `: ${schema.description}` : ""}`,
            dataset: { param: name },
          }),
        }));
        const button = h(
          "button",
          {
            type: "button",
            class: `option${option.id === data.default ? " default" : ""}`,
            dataset: { option: option.id },
            onclick: () => answer(item, option, params),
          },
          option.label || option.id,
          option.id === data.default ? h("span", { class: "hint" }, " (default)") : null,
        );
        return h("div", { class: "option-row" }, button, params.length ? h("div", { class: "params" }, params.map((p) => p.input)) : null);
      }),
    );
    const defaultLabel = (data.options || []).find((o) => o.id === data.default)?.label || data.default;
    const total = Math.max(0, Number(data.timeout) || 0) * 1000;
    const deadline = item.received + total;
    const tick = () => {
      if (state.decision !== item) return;
      const left = Math.max(0, deadline - performance.now());
      $("decision-countdown").textContent = total ? `${Math.ceil(left / 1000)} s, then: ${defaultLabel}` : "";
      $("decision-bar").style.width = total ? `${(100 * left) / total}%` : "0";
      if (total && left <= 0) {
        toast(`No answer in time: the rules chose ${defaultLabel}`);
        finishDecision(item);
      }
    };
    clearInterval(state.decisionTimer);
    state.decisionTimer = setInterval(tick, 200);
    tick();
    if (!dialog.open) dialog.showModal();
  }

  function answer(item, option, params) {
    const given = {};
    for (const p of params) {
      const raw = p.input.value.trim();
      if (raw === "") continue;
      given[p.name] = /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw;
    }
    item.ack(Object.keys(given).length ? { option: option.id, params: given } : option.id);
    finishDecision(item);
  }

  function finishDecision(item) {
    if (state.decision !== item) return;
    clearInterval(state.decisionTimer);
    nextDecision();
  }

  /** The server settled a question this client was asked (another tab answered, or time ran out). */
  function onDecisionClosed(data) {
    const matches = (item) => item.data.attack?.id === data.attack && item.data.key === data.key;
    state.decisions = state.decisions.filter((item) => !matches(item));
    const current = state.decision;
    if (current && matches(current)) {
      if (data.how === "timeout") toast("No answer in time: the rules chose the default");
      else if (data.how === "answered") toast("Answered elsewhere");
      finishDecision(current);
    }
  }

  /** Another client answered (or the attack ended): drop what is on screen for it. */
  function closeDecisionIfSettled(attackId, step) {
    const current = state.decision;
    const settled = (item) =>
      item.data.attack?.id === attackId &&
      (step === null || (step.decisions || []).some((d) => d === item.data.key || d === item.data.name));
    state.decisions = state.decisions.filter((item) => !settled(item));
    if (current && settled(current)) finishDecision(current);
  }

  // -- wiring --------------------------------------------------------------------------------

  function init() {
    const hash = new URLSearchParams(location.hash.slice(1));
    let remembered = {};
    try {
      remembered = JSON.parse(sessionStorage.getItem("vtt-bridge") || "{}");
    } catch (e) {
      remembered = {};
    }
    const table = hash.get("table") || remembered.table || "";
    const key = hash.get("key") || remembered.key || "";
    $("join-table").value = table;
    $("join-key").value = key;
    $("join-form").addEventListener("submit", (ev) => {
      ev.preventDefault();
      join($("join-table").value.trim(), $("join-key").value.trim());
    });
    $("leave").addEventListener("click", () => {
      try {
        sessionStorage.removeItem("vtt-bridge");
      } catch (e) {
        /* nothing remembered */
      }
      state.socket?.disconnect();
      state.socket = null;
      $("app").hidden = true;
      $("join").hidden = false;
      $("leave").hidden = true;
      setStatus("offline", "offline");
    });
    $("attack-ruleset").addEventListener("change", (ev) => setRuleset(ev.target.value));
    $("scene-ruleset").addEventListener("change", (ev) => {
      if (ev.target.value) setRuleset(ev.target.value);
      else {
        state.sceneRuleset = "";
        renderScene();
      }
    });
    $("attack-attacker").addEventListener("change", (ev) => {
      state.attacker = ev.target.value;
      renderAttackers();
      renderScene();
    });
    $("attack-form").addEventListener("submit", submitAttack);
    $("zoom-in").addEventListener("click", () => {
      state.zoom = Math.min(80, state.zoom + 6);
      renderScene();
    });
    $("zoom-out").addEventListener("click", () => {
      state.zoom = Math.max(14, state.zoom - 6);
      renderScene();
    });
    $("history-refresh").addEventListener("click", refreshHistory);
    $("history-all").addEventListener("change", refreshHistory);
    $("timeout-form").addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const ack = await call("table.update", { decision_timeout: Number($("decision-timeout").value) });
      if (ack.ok) {
        state.table = ack.table;
        toast(`Decisions now wait ${ack.table.settings.decision_timeout} s`);
      } else toast(describeError(ack.error), "error");
    });
    $("key-form").addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const ack = await call("key.create", { user: $("key-user").value.trim() });
      if (ack.ok) {
        const link = `${location.origin}/#table=${encodeURIComponent(state.table.id)}&key=${encodeURIComponent(ack.key)}`;
        $("key-result").replaceChildren(`Key for ${ack.user}: `, h("code", {}, ack.key), " — ", h("a", { href: link, target: "_blank" }, "join link"));
      } else toast(describeError(ack.error), "error");
    });
    $("decision").addEventListener("cancel", (ev) => ev.preventDefault()); // Esc: the rules still want an answer
    if (table && key) join(table, key);
  }

  init();
})();
