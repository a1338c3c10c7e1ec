#!/usr/bin/env node
// The command lives in dist/ (built); this stub exists before any build, so installing the
// workspace can link the command without a warning.
import '../dist/main.js';
