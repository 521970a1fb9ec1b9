import { probeShard } from "../helpers/probe";

// The OpenAPI-derived authorization probe (test/helpers/probe.ts), shard 4 of 4.
probeShard(3, 4);
