// The harness's player scenarios (scenarios/player-*.mjs) on simulated Foundry 13, as Alice.
import { runVersion } from "./run.mjs";

await runVersion(13, { me: "alice000000001", only: "player-" });
