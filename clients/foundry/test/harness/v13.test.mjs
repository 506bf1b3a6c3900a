// Every harness scenario against simulated Foundry 13 (see README.md beside this file).
import { runVersion } from "./run.mjs";

await runVersion(13);
