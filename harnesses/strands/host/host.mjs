#!/usr/bin/env node
// Fabric adapter host for Strands Agents TS (nvidia.fabric.strands): the engine
// (engine.mjs) served on fabric.host/v2 by the kit.
import { serve } from "fabric-node-host";
import { engine } from "./engine.mjs";

await serve(engine);
