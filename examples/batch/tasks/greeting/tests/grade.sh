#!/bin/sh
# Passes when the agent's final answer mentions "hello" (exit 0), fails
# otherwise (exit 1).
grep -qi hello "$FABRIC_OUTPUT_FILE"
