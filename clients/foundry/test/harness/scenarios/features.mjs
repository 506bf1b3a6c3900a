// Issue 25, "What Foundry users expect": attacking from a weapon on the sheet, Warmachine
// sprays and AOEs as templates, cards that act (who was struck, how they defended, Dice So
// Nice in step order, Apply/Undo for the GM only), combat turns driving the rules'
// resets, the system's Charm items, a player's refused edit shown to that player, a
// question put again after the connection drops.
import { readFileSync } from "node:fs";
import { io } from "socket.io-client";

import { BridgeConnection } from "../../../src/logic/connection.js";
import { bridgeUserName } from "../../../src/logic/ids.js";

import { MODULE_ROOT, click, exaltedWorldActor, until } from "../foundry.mjs";
import { addCanvasScene, addCombat, addDiceSoNice, moveToken } from "../features.mjs";

const example = (name) => JSON.parse(readFileSync(`${MODULE_ROOT}/../../plugins/vtt_warmachine_mk3/examples/${name}.json`, "utf8"));
const declareDialog = (world) => world.dialogs.find((d) => !d.closed && String(d.options.content).includes("vtt-bridge-declare"));
const decisionDialogs = (world) => world.dialogs.filter((d) => !d.closed && String(d.options.content).includes("vtt-bridge-decision"));

/** Answer every question this client is asked with its default, until `done()`. */
async function answerUntil(world, done, what) {
  await until(async () => {
    for (const q of decisionDialogs(world)) await q.press(q.options.buttons.find((b) => b.default)?.action ?? q.options.buttons[0].action);
    return done();
  }, what, 30000);
}

/** Press the default of every question dialog this client opens, until stopped (the rules' answers, at once). */
function autoAnswer(world) {
  const timer = setInterval(() => {
    for (const q of decisionDialogs(world)) void q.press(q.options.buttons.find((b) => b.default)?.action ?? q.options.buttons[0].action);
  }, 25);
  return () => clearInterval(timer);
}

/** Let the module's GM connection answer the bridge's questions itself (the defender is this client's). */
async function twoExalts(world, { attacker = {}, defender = {} } = {}) {
  const a = exaltedWorldActor(world, { name: "Anoria", dex: 5, melee: 5, weapon: "Daiklave", ...attacker });
  const d = exaltedWorldActor(world, { name: "Monk", dodge: 3, ...defender });
  const scene = world.addScene();
  const ta = world.addToken(scene, a);
  const td = world.addToken(scene, d);
  await world.api().sync();
  return { a, d, ta, td, scene };
}

/** A world actor of the Warmachine ruleset (no adapter: the Bridge tab's flags hold its card). */
function warmachineActor(world, token) {
  return world.addActor({ name: token.name, type: "character", ownership: { default: 0, [world.user.id]: 3 }, system: {}, items: [], flags: { "vtt-bridge": { enabled: true, ruleset: "warmachine_mk3", system: token.system, packs: token.flags ?? {} } } });
}

/** A Warmachine example seated on a scene with an inch grid, tokens where the example puts the models. */
async function warmachineScene(world, name) {
  const ex = example(name);
  const scene = addCanvasScene(world, world.addScene());
  const byId = {};
  for (const t of ex.tokens) {
    const actor = warmachineActor(world, t);
    const token = world.addToken(scene, actor);
    const squares = (t.system.base ?? 30) / 25.4;
    byId[t.id] = { actor, token };
    moveToken(world, token, { x: t.system.position.x * 100 - squares * 50, y: t.system.position.y * 100 - squares * 50, width: squares, height: squares });
  }
  await world.api().sync();
  return { ex, scene, byId };
}

/** The spray and AOE part of the template scenario. */
async function sprayAndAoe(world, gm, assert) {
  const spray = await warmachineScene(world, "spray_two_models");
  const id = (k) => `a-${spray.byId[k].actor.id}`;
  // The writer keeps each model's position at its token's place (inches, from the 100 px grid).
  await until(async () => (await gm.request("token.get", { id: id("bane2") })).token.system.position.x === 10.9, "the position synced");
  // No cone yet: a warning, and the spray goes against the target alone.
  const lone = await world.api().attack({ attacker: spray.byId.firebrand.token.object, targets: [spray.byId.bane1.token.object], declaration: { weapon: "Flame Thrower" } });
  assert.deepEqual(lone.declaration.models_under_template, []);
  assert.ok(world.notices.some((n) => /is a spray: place a cone template/.test(n.message)));
  // The player's cone, from the Firebrand straight down over both Banes (a fresh seating:
  // the first spray's dice may have wrecked Bane 1).
  const again = await warmachineScene(world, "spray_two_models");
  const id2 = (k) => `a-${again.byId[k].actor.id}`;
  await until(async () => (await gm.request("token.get", { id: id2("bane2") })).token.system.position.x === 10.9, "the positions synced");
  again.scene.placeTemplate({ t: "cone", x: 1000, y: 1000, direction: 90, angle: 30, distance: 8 });
  const record = await world.api().attack({ attacker: again.byId.firebrand.token.object, targets: [again.byId.bane1.token.object], declaration: { weapon: "Flame Thrower" } });
  assert.deepEqual(record.declaration.models_under_template, [id2("bane2")]);
  assert.deepEqual(Object.keys(record.outcome.models).sort(), [id2("bane1"), id2("bane2")].sort());
  // An AOE: a circle of the AOE's radius where it landed; after a deviation, a ray from the aim point.
  const aoe = await warmachineScene(world, "aoe_deviation_blast");
  const aid = (k) => `a-${aoe.byId[k].actor.id}`;
  await until(async () => (await gm.request("token.get", { id: aid("trencher3") })).token.system.position.y === 19, "the positions synced");
  const blast = await world.api().attack({ attacker: aoe.byId.defender.token.object, targets: [aoe.byId.trencher1.token.object], declaration: { weapon: "Heavy Barrel" } });
  const drawn = aoe.scene.templates.contents.filter((t) => t.flags?.["vtt-bridge"]?.attack === blast.id);
  const circle = drawn.find((t) => t.t === "circle");
  assert.equal(circle.distance, 1.5, "a 3\" AOE: a 1.5\" radius");
  const dev = blast.outcome.deviation;
  if (dev) {
    assert.deepEqual([circle.x, circle.y].map(Math.round), [dev.to.x * 100, dev.to.y * 100].map(Math.round));
    const ray = drawn.find((t) => t.t === "ray");
    assert.deepEqual([ray.x, ray.y, ray.distance], [dev.from.x * 100, dev.from.y * 100, Math.round(Math.hypot(dev.to.x - dev.from.x, dev.to.y - dev.from.y) * 1000) / 1000]);
  } else {
    assert.deepEqual([circle.x, circle.y], [1000, 1800], "a hit: centred on the target");
    assert.equal(drawn.length, 1);
  }
}

export const scenarios = [
  {
    name: "attack from the sheet: a weapon row's control attacks the user's targets, the dialog prefilled; the Charms not automated listed",
    async run({ world, gm, assert }) {
      const { a, d, td } = await twoExalts(world, { attacker: { weapon: "Daiklave" } });
      // The system's Charm items: one the excellencies pack implements, one no pack does.
      a.items.push(Object.assign(new a.items[0].constructor({ type: "charm", name: "First Melee Excellency", system: {} }), { parent: a, actor: a }));
      a.items.push(Object.assign(new a.items[0].constructor({ type: "charm", name: "Heavenly Guardian Defense", system: {} }), { parent: a, actor: a }));
      await world.api().sync();
      const { token } = await gm.request("token.get", { id: `a-${a.id}` });
      assert.deepEqual(token.flags.excellencies?.charms, ["first-excellency"], "the character's Charms are the pack's list");
      // A system's sheet lists items as rows carrying data-item-id (Foundry's Simple Worldbuilding
      // system's actor sheet template does; an AppV2 sheet's render hook gets its element).
      const [weapon, charm] = [a.items[0], a.items[1]];
      const sheet = world.window.document.createElement("form");
      sheet.innerHTML = `<ol><li class="item" data-item-id="${weapon.id}">${weapon.name}</li><li class="item" data-item-id="${charm.id}">${charm.name}</li></ol>`;
      const hook = world.version >= 13 ? "renderActorSheetV2" : "renderActorSheet";
      world.hooks.callAll(hook, { document: a, element: sheet }, world.version >= 13 ? sheet : [sheet], {});
      world.hooks.callAll(hook, { document: a, element: sheet }, world.version >= 13 ? sheet : [sheet], {}); // a re-render adds none twice
      const controls = sheet.querySelectorAll(".vtt-bridge-weapon-attack");
      assert.equal(controls.length, 1, "only the weapon row has the control");
      assert.ok(sheet.querySelector(`[data-item-id="${weapon.id}"] .vtt-bridge-weapon-attack`));
      world.targets.clear();
      world.targets.add(td.object);
      const before = world.messages.size;
      click(world, controls[0]);
      const dialog = await until(() => declareDialog(world), "the declaration dialog");
      assert.equal(dialog.element.querySelector("[name=weapon]").value, "Daiklave", "the weapon clicked is filled in");
      assert.match(dialog.element.querySelector(".vtt-bridge-not-automated").textContent, /Heavenly Guardian Defense/);
      assert.match(dialog.element.querySelector(".vtt-bridge-charms").textContent, /plays: First Melee Excellency/);
      assert.ok(dialog.element.querySelector("[name='declare:first-excellency']") && !dialog.element.querySelector("[name='declare:second-excellency']"), "only the Charms the character has are offered");
      await dialog.press("attack");
      await answerUntil(world, () => world.messages.size >= before + 2, "the cards");
      const card = world.messages.contents.slice(before).find((m) => !m.flags["vtt-bridge"].gm);
      const record = (await gm.request("attack.get", { id: card.flags["vtt-bridge"].attack })).attack;
      assert.deepEqual([record.attacker, record.targets, record.declaration.weapon], [`a-${a.id}`, [`a-${d.id}`], "Daiklave"]);
      // The summary line says how the Monk defended.
      assert.match(card.element.querySelector(".vtt-bridge-summary .detail").textContent, /Monk defended: /);
      world.targets.clear();
      // A weapon the bridge's token does not carry: a warning, the dialog without it; api.attackWith is the same path.
      const club = Object.assign(new a.items[0].constructor({ type: "weapon", name: "Club", system: {} }), { parent: a, actor: a });
      const pending = world.api().attackWith(club, { targets: [td.object] });
      const second = await until(() => declareDialog(world), "the dialog again");
      assert.ok(world.notices.some((n) => n.level === "warn" && /no weapon "Club" at the bridge/.test(n.message)));
      await second.close();
      assert.equal(await pending, null, "closing the dialog attacks nobody");
    },
  },
  {
    name: "Dice So Nice throws the card's rolls one by one in step order before the card, which it then leaves alone; Apply and Undo are the GM's",
    async run({ world, gm, assert }) {
      const thrown = addDiceSoNice(world);
      const { ta, td, d } = await twoExalts(world, { defender: { dodge: 0 } });
      gm.onDecision(async (decision) => decision.default ?? decision.options[0].id);
      try {
        const before = world.messages.size;
        // The module's own connection is asked (the defender is this GM's): answer in the dialog.
        const attack = world.api().attack({ attacker: ta.object, targets: [td.object], declaration: { weapon: "Daiklave" } });
        await answerUntil(world, () => world.messages.size >= before + 2, "the cards");
        const record = await attack;
        const card = world.messages.contents.slice(before).find((m) => !m.flags["vtt-bridge"].gm);
        assert.ok(thrown.length > 0 && thrown.length === card.rolls.length, "every roll thrown");
        assert.deepEqual(thrown.map((x) => x.roll), card.rolls, "in the card's (step) order");
        assert.ok(thrown.every((x) => x.messages === before && x.synchronize === true), "all before the card is posted, shown to everyone");
        const labels = thrown.map((x) => x.flavor);
        const firstDamage = labels.findIndex((l) => /damage/i.test(l));
        assert.ok(firstDamage === -1 || labels.findIndex((l) => /attack|accuracy/i.test(l)) < firstDamage, `the attack roll before the damage: ${labels}`);
        assert.deepEqual(card.flags["dice-so-nice"], { skip: true }, "Dice So Nice does not throw them again");
        // Apply: the GM writes the bridge's numbers of the attack's tokens to the actors.
        const apply = card.element.querySelector(".vtt-bridge-apply");
        assert.ok(apply && card.element.querySelector(".vtt-bridge-undo"));
        click(world, apply);
        await until(() => world.notices.some((n) => /written to \d+ actor/.test(n.message)), "Apply's notice");
        const { token } = await gm.request("token.get", { id: `a-${d.id}` });
        assert.equal(d.getFlag("vtt-bridge", "version"), token.version);
        // A player's client shows the card without the GM's buttons.
        const gmUser = world.user;
        world.user = { id: "alice000000001", name: "Alice", isGM: false, active: true };
        try {
          const mine = await card.renderHTML();
          assert.equal(mine.querySelector(".vtt-bridge-buttons"), null);
        } finally {
          world.user = gmUser;
        }
        assert.ok(record.id);
      } finally {
        gm.onDecision(null);
        delete world.game.dice3d;
      }
    },
  },
  {
    name: "a spray: the cone template the player placed gives the attack its models; an AOE is drawn where it landed",
    async run({ world, gm, assert }) {
      const stop = autoAnswer(world);
      try {
        await sprayAndAoe(world, gm, assert);
      } finally {
        stop();
        globalThis.canvas.scene = undefined;
      }
    },
  },
  {
    name: "combat turns: at the Exalt's new action its DV penalty and the onslaught against it lapse (token updates); stepping back resets nothing",
    async run({ world, gm, assert }) {
      const { a, d, ta, td } = await twoExalts(world);
      const A = `a-${a.id}`;
      const D = `a-${d.id}`;
      await gm.request("token.update", { id: A, system: { dv_penalty: 2, onslaught: { [D]: 1 } } });
      await gm.request("token.update", { id: D, system: { dv_penalty: 1, onslaught: { [A]: 3 } } });
      const combat = addCombat(world, [td, ta]); // the Monk acts first
      const sys = async (id) => (await gm.request("token.get", { id })).token.system;
      combat.next(); // Anoria's turn
      await until(async () => (await sys(A)).dv_penalty === 0, "Anoria's DV penalty lapses");
      assert.deepEqual((await sys(A)).onslaught, { [D]: 0 });
      await until(async () => (await sys(D)).onslaught[A] === 0, "Anoria's onslaught on the Monk restarts");
      assert.equal((await sys(D)).dv_penalty, 1, "the Monk's own penalty waits for its tick");
      await until(() => a.getFlag("vtt-bridge", "system")?.dv_penalty === 0, "written back to the actor");
      combat.previous(); // back to the Monk: nothing resets
      await new Promise((r) => setTimeout(r, 300));
      assert.equal((await sys(D)).dv_penalty, 1);
      combat.next();
      combat.next(); // round 2: the Monk's turn
      await until(async () => (await sys(D)).dv_penalty === 0, "the Monk's DV penalty lapses at its tick");
    },
  },
  {
    name: "a player's edit the bridge refuses: the GM's client sends the field errors to that player, whose client shows them",
    async run({ world, assert }) {
      const socket = world.game.socket;
      socket.emitted.length = 0;
      const actor = exaltedWorldActor(world, { name: "Alice's hero", owner: "alice000000001" });
      await world.api().sync();
      // Alice saves her Bridge tab with a DV penalty past the schema's 50; the update reaches the GM's client.
      const change = { "flags.vtt-bridge.system.dv_penalty": 99 };
      actor._source.flags["vtt-bridge"].system = { ...actor._source.flags["vtt-bridge"].system, dv_penalty: 99 };
      world.hooks.callAll("updateActor", actor, change, { vttBridgeSave: true }, "alice000000001");
      const sent = await until(() => socket.emitted.find((e) => e.event === "module.vtt-bridge"), "the errors sent to alice");
      assert.equal(sent.payload.user, "alice000000001");
      assert.match(Object.keys(sent.payload.error.fields).join(), /dv_penalty/);
      // On Alice's client the message shows as a warning naming the field.
      const gmUser = world.user;
      world.user = { id: "alice000000001", name: "Alice", isGM: false, active: true };
      try {
        world.notices.length = 0;
        socket.deliver("module.vtt-bridge", sent.payload);
        assert.ok(world.notices.some((n) => n.level === "warn" && /Alice's hero: .*dv_penalty/.test(n.message)), JSON.stringify(world.notices));
        world.notices.length = 0;
        socket.deliver("module.vtt-bridge", { ...sent.payload, user: "bob00000000001" });
        assert.deepEqual(world.notices, [], "not another player's");
      } finally {
        world.user = gmUser;
      }
    },
  },
  {
    name: "a question put to this client comes back after its connection drops and reconnects; the first dialog gives way to it",
    async run({ world, gm, bridge, assert }) {
      // Alice's Anoria attacks the Monk, whom nobody owns at the bridge but the GM: the GM's
      // connections are asked — this client's and the test's own, which says goodbye so that
      // only this client's is left.
      const { ta, td } = await twoExalts(world, { attacker: { owner: "alice000000001" } });
      const alice = new BridgeConnection({ io, url: bridge.url, table: bridge.table, key: await gm.createKey(bridgeUserName({ id: "alice000000001" })), timeout: 40000 });
      await alice.connect();
      alice.onDecision((decision) => decision.default ?? decision.options[0].id); // the attacker's own questions, at once
      const attack = alice.attack({ ruleset: "exalted2e", attacker: `a-${ta.actorId}`, targets: [`a-${td.actorId}`], declaration: { weapon: "Daiklave" } });
      const first = await until(() => decisionDialogs(world)[0], "the question");
      gm.socket.disconnect();
      try {
        world.api().connection.socket.io.engine.close(); // the network drops (no goodbye); socket.io reconnects
        // Within the grace time the bridge puts the question again to the new connection: its dialog replaces the first.
        const again = await until(() => decisionDialogs(world).find((q) => q !== first), "the question put again");
        await until(() => first.closed, "the first dialog closes");
        assert.equal(again.options.window.title, first.options.window.title);
        const stop = autoAnswer(world); // this question and the ones after it (the stunt, a counterattack)
        const record = await attack.finally(stop);
        const defense = record.decisions.find((x) => x.key === "defense");
        assert.equal(defense.how, "answered", JSON.stringify(record.decisions.map((x) => [x.key, x.how])));
      } finally {
        alice.close();
        gm.socket.connect();
        await until(() => gm.connected, "the test's GM connection is back");
      }
    },
  },
];
