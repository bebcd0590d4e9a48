//! Imported first by ./client.js, before any module of the MCP SDK is evaluated. The SDK declares its message
//! schemas with zod, and zod probes whether `new Function` works (to compile faster parsers) as each object schema
//! is created, unless its global config says `jitless`. Under the widget's strict Content-Security-Policy (no
//! 'unsafe-eval') that probe is refused and reported as a violation on every page with MCP servers; with
//! `jitless` zod interprets its schemas and never tries. The config must be set before the SDK's modules create
//! their schemas, which is why this is a module of its own and ./client.js imports it before the SDK.
import { config } from 'zod/v4';

config({ jitless: true });
