/**
 * Physical dice (Foundry's "manual" dice fulfilment, asked over the wire): reading the
 * faces a player types for a faces question (`decision.dice`: `{label, number, sides}`,
 * `sides` a list for a mixed pool) and checking them as the server will — as many faces
 * as dice, each from 1 to its die's size — so a dialog can say what is wrong as they type.
 * No DOM: the web table and the Foundry module can both use it.
 */

/** Sizes of the dice asked for, one per die: `{number: 12, sides: 10}` or a mixed pool's list. */
export function diceSizes(dice) {
  return Array.isArray(dice.sides) ? dice.sides : Array.from({ length: dice.number }, () => dice.sides);
}

/** The faces typed (spaces or commas between them), checked against the dice asked for:
 * `{faces}` or `{error}` naming the first problem. */
export function readFaces(text, dice) {
  const sizes = diceSizes(dice);
  const words = text.split(/[\s,;]+/).filter(Boolean);
  for (const [i, w] of words.entries()) {
    const face = Number(w);
    const size = sizes[i] ?? sizes[sizes.length - 1];
    if (!/^\d+$/.test(w) || face < 1 || face > size) return { error: `Die ${i + 1} shows ${w}: a d${size} shows 1–${size}.`, count: words.length };
  }
  if (words.length !== sizes.length) return { error: `${words.length} of ${sizes.length} faces entered.`, count: words.length };
  return { faces: words.map(Number), count: words.length };
}
