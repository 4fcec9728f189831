#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, so `npx wt ...` works straight after `npm install`.
import { register } from 'tsx/esm/api';

register();
const { program } = await import('../src/cli/main.ts');
await program();
