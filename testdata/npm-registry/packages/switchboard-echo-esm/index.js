#!/usr/bin/env node
// switchboard-echo-server, imported: an ES module whose dependency npx
// installs next to it.
import 'switchboard-echo-server/index.js';
