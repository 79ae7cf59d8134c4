#!/usr/bin/env node
// Fabric adapter host for LangChain Deep Agents JS (nvidia.fabric.deepagents): the engine
// (engine.mjs) served on fabric.host/v2 by the kit.
import { serve } from "fabric-node-host";
import { engine } from "./engine.mjs";

await serve(engine);
