//! The store's own errors: opening the database ([`ConnectError`], at start-up, before the port opens) and
//! using it ([`StoreError`]). The HTTP layer maps a [`StoreError`] to its answer (`QUOTA_EXCEEDED`, or
//! `INTERNAL` with the detail only in the log); the store knows nothing of HTTP.

/// A failed store operation.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database failed (connection, statement, transaction).
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    /// A per-user quota (conversation count or stored bytes) would be exceeded; nothing was stored.
    #[error("{0}")]
    QuotaExceeded(String),
    /// The SQLite writer task (group commit) is gone or answered out of turn; nothing was acknowledged.
    #[error("database: {0}")]
    Writer(String),
}

/// The database could not be opened; the message names the setting to look at.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// `database.url` does not parse.
    #[error("database.url: {0}")]
    InvalidUrl(#[source] sqlx::Error),
    /// The SQLite file cannot be opened or created.
    #[error("database: cannot open SQLite: {0}")]
    OpenSqlite(#[source] sqlx::Error),
    /// The PostgreSQL server cannot be reached or refused the login.
    #[error("database: cannot connect to PostgreSQL: {0}")]
    ConnectPostgres(#[source] sqlx::Error),
    /// `database.schema` cannot be created.
    #[error("database.schema: {0}")]
    Schema(#[source] sqlx::Error),
    /// Any other database failure while opening.
    #[error("database: {0}")]
    Database(#[source] sqlx::Error),
    /// An embedded migration failed.
    #[error("database: migration failed: {0}")]
    Migration(#[from] sqlx::migrate::MigrateError),
}
