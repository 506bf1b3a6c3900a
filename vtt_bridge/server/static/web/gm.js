/* GM tools: the decision timeout, the packs active at the table, physical dice (the table's switch and one per player), player keys (with a join link), new tokens, and the
 * campaign in and out of the table as a file (`table.export` / `tokens.import`, where
 * the server has them). */

import { call, reloadRulesets } from "./connection.js";
import { $, describeError, flattenDetails, h, toast, fill } from "./dom.js";
import { announce, isGM, state } from "./state.js";
import { openEditor } from "./tokens.js";

export function renderGMTools() {
  const gm = isGM();
  $("gm-tools").hidden = !gm;
  for (const el of document.querySelectorAll(".gm-only")) el.hidden = !gm;
  if (state.table?.settings?.decision_timeout !== undefined && document.activeElement !== $("decision-timeout")) {
    $("decision-timeout").value = state.table.settings.decision_timeout;
  }
  renderPacks();
  if (gm) renderPhysical();
}

/** The installed packs, each with a switch: on means its hooks and Charms act at this table. */
function renderPacks() {
  const packs = state.table?.packs || [];
  $("packs-form").hidden = !packs.length;
  fill(
    $("packs-list"),
    packs.map((p) =>
      h(
        "label",
        { class: "check pack" },
        h("input", { type: "checkbox", dataset: { pack: p.name }, checked: p.active, onchange: setPacks }),
        ` ${p.name}`,
        p.version ? h("span", { class: "hint" }, ` ${p.version}`) : null,
      ),
    ),
  );
}

/** The players the GM may switch physical dice for: owners of tokens, and whoever is connected. */
function players() {
  const names = new Set((state.users || []).filter((u) => u !== "gm"));
  for (const token of state.tokens.values()) {
    for (const [user, lvl] of Object.entries(token.ownership || {})) if (user !== "gm" && user !== "default" && Number(lvl) >= 3) names.add(user);
  }
  return [...names].sort();
}

/** Whether ``user`` rolls real dice: the GM's switch for them, else the table's setting. */
export function rollsByHand(settings, user) {
  const own = settings?.physical_dice_players?.[user];
  if (own !== undefined && own !== null) return !!own;
  return user !== "gm" && !!settings?.physical_dice;
}

function renderPhysical() {
  const settings = state.table?.settings || {};
  $("physical-table").checked = !!settings.physical_dice;
  fill(
    $("physical-players"),
    ...["gm", ...players()].map((user) =>
      h(
        "label",
        { class: "physical-player", dataset: { user } },
        h("input", {
          type: "checkbox",
          checked: rollsByHand(settings, user),
          onchange: (ev) => setPhysical({ physical_dice_players: { [user]: ev.target.checked } }),
        }),
        user === "gm" ? " GM (tokens no player owns)" : ` ${user}`,
      ),
    ),
  );
}

async function setPacks() {
  const boxes = [...$("packs-list").querySelectorAll("input[data-pack]")];
  const packs = boxes.filter((b) => b.checked).map((b) => b.dataset.pack);
  for (const b of boxes) b.disabled = true;
  const ack = await call("table.update", { packs });
  if (ack.ok) {
    state.table = ack.table;
    toast(packs.length ? `Packs at this table: ${packs.join(", ")}` : "No packs at this table");
    await reloadRulesets();
  } else toast(describeError(ack.error), "error");
  renderPacks();
}

async function setPhysical(change) {
  const ack = await call("table.update", change);
  if (ack.ok) {
    state.table = ack.table;
    renderPhysical();
    toast(change.physical_dice === undefined ? "Physical dice switched" : `Physical dice ${change.physical_dice ? "on" : "off"} for the table`);
  } else toast(describeError(ack.error), "error");
}

async function setTimeoutSeconds(ev) {
  ev.preventDefault();
  const ack = await call("table.update", { decision_timeout: Number($("decision-timeout").value) });
  if (ack.ok) {
    state.table = ack.table;
    toast(`Decisions now wait ${ack.table.settings.decision_timeout} s`);
  } else toast(describeError(ack.error), "error");
}

async function issueKey(ev) {
  ev.preventDefault();
  const ack = await call("key.create", { user: $("key-user").value.trim() });
  if (ack.ok) {
    const link = `${location.origin}/#table=${encodeURIComponent(state.table.id)}&key=${encodeURIComponent(ack.key)}`;
    fill($("key-result"), `Key for ${ack.user}: `, h("code", {}, ack.key), " — ", h("a", { href: link, target: "_blank" }, "join link"));
  } else toast(describeError(ack.error), "error");
}

async function exportTable() {
  const ack = await call("table.export", {});
  if (!ack.ok) return toast(`Export failed: ${describeError(ack.error)}`, "error");
  const { ok, ...data } = ack;
  const blob = new Blob([JSON.stringify(data, null, 2)], { type: "application/json" });
  const a = h("a", { href: URL.createObjectURL(blob), download: `${(state.table?.name || "table").replace(/[^\w.-]+/g, "-")}.json` });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}

async function importTokens(ev) {
  const file = ev.target.files?.[0];
  ev.target.value = "";
  if (!file) return;
  let data;
  try {
    data = JSON.parse(await file.text());
  } catch (err) {
    return toast(`${file.name} is not JSON: ${err.message}`, "error");
  }
  const ack = await call("tokens.import", data, 60000);
  if (!ack.ok) {
    fill($("import-result"), 
      h("strong", {}, "Nothing was imported: "),
      ack.error?.message || "refused",
      h("ul", {}, flattenDetails(ack.error?.details || {}).map((line) => h("li", {}, line))),
    );
    return;
  }
  $("import-result").textContent = `Imported ${ack.tokens?.length ?? ack.count ?? "the"} tokens.`;
  toast("Tokens imported");
  const tokens = await call("token.list");
  if (tokens.ok) {
    state.tokens = new Map(tokens.tokens.map((t) => [t.id, t]));
    announce("tokens");
  }
}

export function wireGMTools() {
  $("timeout-form").addEventListener("submit", setTimeoutSeconds);
  $("physical-table").addEventListener("change", (ev) => setPhysical({ physical_dice: ev.target.checked }));
  $("key-form").addEventListener("submit", issueKey);
  $("new-token").addEventListener("click", () => openEditor({ mode: "create" }));
  $("export-table").addEventListener("click", exportTable);
  $("import-file").addEventListener("change", importTokens);
}
