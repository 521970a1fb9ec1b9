import { probeShard } from "../helpers/probe";

// The OpenAPI-derived authorization probe (test/helpers/probe.ts), shard 2 of 4.
probeShard(1, 4);
