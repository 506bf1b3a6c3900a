// A whole attack through a real `vtt-bridge serve`, driven by the module's own code:
// the GM's client makes the players' keys and the tokens from Foundry actors, the
// attacker's client attacks, the defender's client answers the question with the
// dialog model, the card and its rolls are built, the GM's client writes back.
import assert from "node:assert/strict";
import { test } from "node:test";

import { BridgeError } from "../src/logic/connection.js";
import { defaultAdapters } from "../src/logic/adapters.js";
import { bridgeTokenId, bridgeUserName } from "../src/logic/ids.js";
import { actorUpdateFromToken, syncRequest, tokenFromActor } from "../src/logic/tokens.js";
import { answerFor, decisionModel } from "../src/logic/decisions.js";
import { declarationModel, collectDeclaration } from "../src/logic/declaration.js";
import { chatCard } from "../src/logic/chat.js";
import { totalOf } from "../../../vtt_bridge/server/static/common/rolls.js";
import { USERS, bridgeForFile, exaltedActor } from "./helpers.mjs";

const adapter = defaultAdapters().for("exalted2e");
const table = bridgeForFile({ decisionTimeout: 20, connection: { attackTimeout: 60000 } });
const connect = table.connect;

test("a wrong key is refused with the bridge's reason", async () => {
  const c = connect("not-a-key");
  await assert.rejects(c.connect(), (e) => e instanceof BridgeError && e.code === "forbidden");
});

test("an attack from the attacker's client, the question answered in the defender's client", async () => {
  const gm = connect(table.bridge.gmKey);
  const me = await gm.connect();
  assert.equal(me.role, "gm");

  // The GM's "Players" dialog: one key per Foundry user.
  const keys = {};
  for (const user of USERS.filter((u) => !u.isGM)) keys[user.id] = await gm.createKey(bridgeUserName(user));

  // Two marked actors become bridge tokens.
  const anoria = exaltedActor({ id: "ActAnoria000001", name: "Anoria", owner: "alice000000001", dex: 5, melee: 5, weapon: "Daiklave" });
  const monk = exaltedActor({ id: "ActMonk00000001", name: "Monk", owner: "bob00000000001", dodge: 3 });
  const ids = {};
  for (const actor of [anoria, monk]) {
    const id = bridgeTokenId({ actorId: actor._id });
    ids[actor.name] = id;
    const wanted = tokenFromActor(actor, { id, adapter, users: USERS });
    const req = syncRequest(null, wanted);
    const { token } = await gm.request(req.event, req.payload);
    assert.equal(token.version, 1);
  }
  const { token: current } = await gm.request("token.get", { id: ids.Monk });
  assert.deepEqual(current.ownership, { "u-bob00000000001": 3 });
  assert.equal(syncRequest(current, tokenFromActor(monk, { id: ids.Monk, adapter, users: USERS })), null);

  const alice = connect(keys.alice000000001);
  const bob = connect(keys.bob00000000001);
  await alice.connect();
  await bob.connect();
  assert.equal(bob.user, "u-bob00000000001");

  const asked = [];
  bob.onDecision(async (decision) => {
    const model = decisionModel(decision);
    asked.push(model);
    const option = model.options.find((o) => o.id === "dodge") ?? model.options[0];
    return answerFor(model, option.id, {});
  });
  alice.onDecision(async (decision) => decisionModel(decision).default ?? undefined);

  const updated = [];
  gm.on("token.updated", ({ token }) => updated.push(token));

  const { rulesets } = await alice.rulesets();
  const ruleset = rulesets.find((r) => r.id === "exalted2e");
  const declaration = collectDeclaration(declarationModel(ruleset), { weapon: "Daiklave" }, []);
  const attack = await alice.attack({ ruleset: "exalted2e", attacker: ids.Anoria, targets: [ids.Monk], declaration });

  assert.equal(attack.attacker, ids.Anoria);
  assert.deepEqual(attack.targets, [ids.Monk]);
  assert.ok(asked.some((m) => m.token === ids.Monk), "the defender's client was asked");
  const defense = attack.decisions.find((d) => d.token === ids.Monk);
  assert.equal(defense.how, "answered");
  assert.equal(defense.answer.option, "dodge");

  // The card: rolls as Foundry roll data whose terms add up to the recorded totals.
  const card = chatCard(attack, { undo: true });
  assert.ok(card.rolls.length >= 1);
  for (const roll of card.rolls) assert.equal(totalOf(roll), roll.total);
  assert.match(card.content, /Anoria → Monk/);
  assert.match(card.content, /class="vtt-bridge-undo"/);
  assert.match(card.gmContent, /Dice: seed \d+/);

  // GM undo from the card.
  const undo = await gm.undo(attack.id);
  assert.equal(undo.attack, attack.id);

  // A hit for certain (the GM's scripted dice): the GM's client writes the damage back to the actor.
  updated.length = 0;
  const sure = (await gm.request("attack", {
    ruleset: "exalted2e", attacker: ids.Anoria, targets: [ids.Monk], declaration: { weapon: "Daiklave" },
    dice: Array(60).fill(10), answers: { defense: "dodge" },
  })).attack;
  assert.equal(sure.outcome.hit, true, JSON.stringify([sure.outcome, sure.ended, sure.decisions]));
  const version = sure.tokens[ids.Monk].after.version;
  const mine = (t) => t.id === ids.Monk && t.version === version;
  for (let i = 0; i < 100 && !updated.some(mine); i++) await new Promise((r) => setTimeout(r, 20));
  const token = updated.find(mine);
  assert.ok(token, "token.updated reached the GM");
  const update = actorUpdateFromToken(token, monk, adapter);
  const marks = token.system.health.damage.filter(Boolean).length;
  assert.ok(marks > 0);
  assert.equal(update["system.health.bashing"] + update["system.health.lethal"] + update["system.health.aggravated"], marks);
  assert.deepEqual(update["flags.vtt-bridge.system"], token.system);
  // Give the Monk his health back: one past Incapacitated is out of the fight and not asked to defend.
  await gm.undo(sure.id);
  alice.close();
  bob.close();
});

test("closing the dialog sends nothing: the rules' default applies, and decision.closed closes it", async () => {
  const gm = connect(table.bridge.gmKey);
  await gm.connect();
  await gm.request("table.update", { decision_timeout: 1 });
  const keys = { bob: await gm.createKey("u-bob00000000001") };
  const bob = connect(keys.bob);
  await bob.connect();
  let aborted = false;
  bob.onDecision(
    (decision, { signal }) =>
      new Promise((resolve) => {
        signal.addEventListener("abort", () => {
          aborted = true;
          resolve(undefined);
        });
      }),
  );
  const attack = await gm.attack({ ruleset: "exalted2e", attacker: "a-ActAnoria000001", targets: ["a-ActMonk00000001"], declaration: { weapon: "Daiklave" } });
  const defense = attack.decisions.find((d) => d.token === "a-ActMonk00000001");
  assert.equal(defense.how, "timeout");
  assert.equal(defense.answer.option, defense.default);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(aborted, true, "decision.closed closed the open question");
  assert.equal(bob.open.size, 0);
});
