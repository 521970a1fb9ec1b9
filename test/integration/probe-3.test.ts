import { probeShard } from "../helpers/probe";

// The OpenAPI-derived authorization probe (test/helpers/probe.ts), shard 3 of 4.
probeShard(2, 4);
