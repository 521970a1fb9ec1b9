import { probeShard } from "../helpers/probe";

// The OpenAPI-derived authorization probe (test/helpers/probe.ts), shard 1 of 4.
probeShard(0, 4);
