// SPDX-License-Identifier: MIT
// count: read JSON strings one a line on stdin, print the tokens o200k_base (GPT-4o, GPT-5)
// makes of each, one a line. The search benchmark's real tokenizer (tests/bench/search-bench.c).
import { createInterface } from "node:readline";
import { encode } from "gpt-tokenizer/encoding/o200k_base";

for await (const line of createInterface({ input: process.stdin }))
  if (line) console.log(encode(JSON.parse(line)).length);
