// The Foundry globals the feature modules touch beyond foundry.mjs's (issue 25, "What
// Foundry users expect"), added to a world in place: Dice So Nice, the module socket,
// the viewed scene's grid and measured templates, token moves, combats. Each simulated
// behaviour says where it comes from, as in foundry.mjs ("types:" a file of
// foundry-vtt-types 13.345.1, "api:" a page of https://foundryvtt.com/api/, "notes:" a
// release-notes page; "dsn:" Dice So Nice's API as its wiki and other modules' calls of
// it show it).

let ids = 0;
const newId = (p) => `${p}${String(++ids).padStart(16 - p.length, "0")}`;

/**
 * `game.dice3d` of Dice So Nice: `showForRoll(roll, user, synchronize, whisper, blind,
 * chatMessageID, speaker)` throws a roll's dice and resolves (true) once they settle
 * (dsn: wiki "API/Roll"; the same seven arguments in modules calling it, e.g.
 * naethure/fvtt-mars-5e js/rolls/dsn.js). A chat message created with rolls is thrown
 * too unless it is flagged `flags["dice-so-nice"].skip` (dsn: Dice3D's
 * shouldInterceptMessage bails on that flag, as the daggerheart system's notes on DSN
 * 6.2.9 say). `thrown` records each throw with the chat log's size at that moment.
 */
export function addDiceSoNice(world, { settle = 5 } = {}) {
  const thrown = [];
  world.game.dice3d = {
    async showForRoll(roll, user, synchronize, whisper, blind) {
      thrown.push({ roll, flavor: roll.options?.flavor ?? "", user: user?.id, synchronize, whisper, blind, messages: world.messages.size, colorsets: (roll.dice ?? []).map((d) => d.options?.appearance?.colorset ?? null) });
      await new Promise((r) => setTimeout(r, settle));
      return true;
    },
  };
  return thrown;
}

/**
 * `game.socket`: the world's socket.io socket, set when the Game is constructed (so
 * there at init); a module with `"socket": true` in its manifest sends and receives on
 * `module.<id>` (api: v13/classes/foundry.Game.html#socket; the manifest field:
 * https://foundryvtt.com/article/module-development/, "socket"). The server relays a
 * message to every OTHER client, never back to its sender. `emitted` records what this
 * client sent; `deliver(event, payload)` is another client's message arriving here.
 */
export function socketSim(world) {
  const listeners = new Map();
  const emitted = [];
  return {
    on(event, fn) {
      listeners.set(event, [...(listeners.get(event) ?? []), fn]);
    },
    emit(event, payload) {
      emitted.push({ event, payload: structuredClone(payload) });
    },
    emitted,
    deliver: (event, payload) => (listeners.get(event) ?? []).forEach((fn) => fn(payload)),
  };
}

/**
 * The viewed scene on `canvas.scene`: `grid.size` (pixels per square) and
 * `grid.distance` (units per square) (types: common/documents/scene.d.mts, grid);
 * `templates` its MeasuredTemplateDocuments — `t` ("circle", "cone", "ray", "rect"),
 * `x`/`y` the origin in pixels, `distance` in grid units, `direction` and `angle` in
 * degrees, `author` the user who placed it (types: common/documents/measured-template.d.mts;
 * `user` became `author` in v12: notes 12.317); `createEmbeddedDocuments("MeasuredTemplate",
 * data)` adds them (api: v13/classes/foundry.abstract.Document.html#createEmbeddedDocuments).
 * A token document has `x`/`y` (top-left, pixels) and `width`/`height` in squares
 * (types: common/documents/token.d.mts); `canvas.tokens.placeables` are the scene's
 * tokens (foundry.mjs), each with its `document`.
 */
export function addCanvasScene(world, scene, grid = { size: 100, distance: 1, units: "in" }) {
  scene.grid = grid;
  scene.templates = new (class extends Map {
    get contents() {
      return [...this.values()];
    }
  })();
  scene.createEmbeddedDocuments = async (type, data) => {
    if (type !== "MeasuredTemplate") throw new Error(`the harness creates only MeasuredTemplates, not ${type}`);
    return data.map((d) => {
      const doc = { id: newId("tmpl"), author: { id: world.user.id }, ...structuredClone(d) };
      scene.templates.set(doc.id, doc);
      return doc;
    });
  };
  scene.placeTemplate = (data) => {
    const doc = { id: newId("tmpl"), author: { id: world.user.id }, ...data };
    scene.templates.set(doc.id, doc);
    return doc;
  };
  globalThis.canvas.scene = scene;
  return scene;
}

/**
 * Move a token: its document's `x`/`y` change and every client gets
 * `updateToken(document, change, options, userId)` (types: client/hooks.d.mts,
 * updateDocument hooks; the token's `parent` is its scene).
 */
export function moveToken(world, token, { x, y, width = token.width ?? 1, height = token.height ?? 1 }) {
  Object.assign(token, { x, y, width, height, parent: token.scene });
  world.hooks.callAll("updateToken", token, { x, y }, {}, world.user.id);
}

/**
 * A started Combat with one combatant per token (types: client/documents/combat.d.mts:
 * `started`, `combatant` the current one, `combatants` a collection, `round`, `turn`).
 * `next()` is `Combat#nextTurn`: the update `{round, turn}` with the option `direction: 1`
 * (api: v13/classes/foundry.documents.Combat.html#nextTurn; the turn wraps to a new round
 * as `nextRound`), `previous()` `Combat#previousTurn` (`direction: -1`); every client gets
 * `updateCombat(combat, change, options, userId)` (types: client/hooks.d.mts).
 */
export function addCombat(world, tokens) {
  const combatants = tokens.map((token) => ({ id: newId("cbt"), token, actor: token.actor }));
  const combat = {
    id: newId("combat"),
    started: true,
    round: 1,
    turn: 0,
    combatants: { contents: combatants },
    get combatant() {
      return combatants[this.turn];
    },
    step(direction) {
      let { round, turn } = this;
      turn += direction;
      if (turn >= combatants.length) [round, turn] = [round + 1, 0];
      if (turn < 0) [round, turn] = [Math.max(1, round - 1), combatants.length - 1];
      const change = round !== this.round ? { round, turn } : { turn };
      Object.assign(this, { round, turn });
      world.hooks.callAll("updateCombat", this, change, { direction }, world.user.id);
    },
    next() {
      this.step(1);
    },
    previous() {
      this.step(-1);
    },
  };
  return combat;
}
