// Drives the LangChain Deep Agents JS engine without Fabric, for the later-turn
// comparison of adapters/nodelib's benchmark: one turn per stdin line.
import { driveDirect } from "fabric-node-host";
import { engine } from "./engine.mjs";

await driveDirect(engine);
