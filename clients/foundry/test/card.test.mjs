// The Foundry chat card of recorded attacks (tests/js/fixtures: `vtt-bridge resolve --json`
// of shipped examples): each roll under the step that judged it, a reroll or extra dice
// under the step that made them, and the ChatMessage's rolls in card order.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { chatCard } from "../src/logic/chat.js";
import { totalOf } from "../../../vtt_bridge/server/static/common/rolls.js";

const record = (name) => JSON.parse(readFileSync(new URL(`../../../tests/js/fixtures/${name}`, import.meta.url), "utf8"));

/** `[step title, [roll line, ...]]` for each step of the card that shows a roll. */
function stepsWithRolls(html) {
  const out = [];
  for (const part of html.split('<details class="vtt-bridge-step">').slice(1)) {
    const title = /<summary>(.*?)<\/summary>/.exec(part)[1];
    const rolls = [...part.matchAll(/<div class="vtt-bridge-roll"><span class="flavor">(.*?)<\/span> <code>(.*?)<\/code> = <b>(-?\d+)<\/b>(.*?)<ol class="dice">(.*?)<\/ol>/g)].map(
      ([, flavor, formula, total, sup, dice]) => {
        const faces = [...dice.matchAll(/<li class="([^"]*)">(\d+)<\/li>/g)].map(([, cls, v]) => (cls.includes("rerolled") ? `(${v})` : v));
        return `${flavor}: ${formula} [${faces.join(" ")}] = ${total}${sup}`;
      },
    );
    if (rolls.length) out.push([title, rolls]);
  }
  return out;
}

test("Warmachine: the missed roll stays as 5b judged it; the reroll sits under the 5b it returned to", () => {
  const card = chatCard(record("warmachine_reroll.json"));
  const steps = stepsWithRolls(card.content).filter(([title]) => title.startsWith("5b."));
  assert.deepEqual(steps, [
    ["5b. Roll the dice <span class=\"item\">(caster)</span>", ["attack roll: 2d6 + 7 [1 2] = 10"]],
    ["5b. Roll the dice <span class=\"item\">(caster)</span>", ["attack roll (reroll): 2d6 + 7 [5 4] = 16"]],
  ]);
  assert.doesNotMatch(card.content, /superseded|0d6/);
  assert.deepEqual(card.rolls.slice(0, 2).map((r) => [r.options.flavor, r.total]), [["attack roll", 10], ["attack roll (reroll)", 16]]);
  for (const roll of card.rolls) assert.equal(totalOf(roll), roll.total);
});

test("GODSGLOOM: ATC.10 as judged, each reroll under its RDP step, the critical dice under ATC.30", () => {
  const card = chatCard(record("godsgloom_rerolls.json"));
  assert.deepEqual(stepsWithRolls(card.content), [
    ["ATC.10 Roll", ["attacker red: 4d6cs&gt;=3 [1 2 6 2] = 1", "attacker blue: 1d6cs&gt;=3 [5] = 1", "defender red: 1d6cs&gt;=3 [3] = 1", "defender blue: 3d6cs&gt;=3 [1 1 2] = 0"]],
    ["RDP.10 Active player: Pool Reroll", ["attacker red Pool Reroll: 4d6cs&gt;=3 [(1) (2) (6) (2) 4 6 6 3] = 4", "attacker blue Pool Reroll: 1d6cs&gt;=3 [(5) 2] = 0"]],
    ["RDP.20 Inactive player: Single-Die Reroll", ["defender blue die 3 reroll: 1d6cs&gt;=3 [(2) 1] = 0"]],
    ["RDP.20 Inactive player: Single-Die Reroll", ["defender blue die 3 reroll: 1d6cs&gt;=3 [(1) 4] = 1"]],
    ["ATC.30 Criticals", ["attacker red critical extra die: 1d6cs&gt;=3 [5] = 1", "defender blue critical extra die: 1d6cs&gt;=3 [3] = 1"]],
  ]);
  assert.equal(card.rolls.length, 10);
  for (const roll of card.rolls) assert.equal(totalOf(roll), roll.total);
});
