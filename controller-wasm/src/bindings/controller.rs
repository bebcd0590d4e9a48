//! `createAgentController` (pending the core controller).
