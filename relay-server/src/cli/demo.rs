//! `patchbridge-relay demo`: try the agent locally with nothing but the binary. Serves the demo page built into
//! the binary at `http://127.0.0.1:PORT/` and the API at `/api`, with the development identity (loopback only),
//! SQLite in a data folder, and either the scripted demo model (labelled not AI) or one real provider chosen by
//! flags, its key read from an environment variable.
//!
//! The configuration is the server's own [`RelayConfig`], built here from the flags: precedence is explicit
//! flags, then the `PATCHBRIDGE_*` environment overrides (as for `--config`), then the demo's defaults. The
//! result goes through the same validation as a configuration file.

use std::path::{Path, PathBuf};

use patchbridge_providers::ProviderKind;
use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};

use crate::config::{AuthScheme, CapabilitiesConfig, ModelConfig, RelayConfig, SecretRef};

pub const USAGE: &str = "\
usage: patchbridge-relay demo [--port N] [--data-dir DIR]
                              [--provider P [--model M] [--base-url URL] [--api-key-env NAME]]
Serves the demo page at http://127.0.0.1:PORT/ and the API at /api: development identity (loopback only),
SQLite in DIR, and the scripted demo model (deterministic scripts, not AI) unless --provider names a real one.
  --port N            port on 127.0.0.1 (default 8787; 0 picks a free one); the MCP Apps sandbox listens on
                      N+1 as http://localhost:N+1 (none with 0)
  --data-dir DIR      folder of the SQLite database (default ./patchbridge-data; created when missing)
  --provider P        openai | openai-responses | anthropic | openai-compatible
  --model M           the provider's model name (default gpt-4.1-mini for openai and openai-responses,
                      claude-sonnet-4-5 for anthropic; required for openai-compatible)
  --base-url URL      the provider's API root (default https://api.openai.com/v1 or
                      https://api.anthropic.com/v1; required for openai-compatible, e.g. http://127.0.0.1:11434/v1)
  --api-key-env NAME  environment variable holding the API key (default OPENAI_API_KEY for openai and
                      openai-responses, ANTHROPIC_API_KEY for anthropic; openai-compatible sends no key without it)
PATCHBRIDGE_* environment overrides apply as for a configuration file (PATCHBRIDGE_LOG, PATCHBRIDGE_NPM_DIR, ...);
flags win over them.";

/// The default `--port`.
pub const DEFAULT_PORT: u16 = 8787;
/// The default `--data-dir`, relative to the working directory.
pub const DEFAULT_DATA_DIR: &str = "patchbridge-data";
/// The database file inside the data folder.
pub const DATABASE_FILE: &str = "relay.sqlite3";

patchbridge_protocol::string_enum! {
    /// The providers `--provider` accepts: each maps to an adapter, a default API root, model and key variable.
    pub enum DemoProvider {
        OpenAi = "openai",
        OpenAiResponses = "openai-responses",
        Anthropic = "anthropic",
        OpenAiCompatible = "openai-compatible",
    }
}

impl DemoProvider {
    /// The adapter (`models[].provider` of a configuration file).
    fn adapter(self) -> ProviderKind {
        match self {
            DemoProvider::OpenAi | DemoProvider::OpenAiCompatible => ProviderKind::OpenAiChat,
            DemoProvider::OpenAiResponses => ProviderKind::OpenAiResponses,
            DemoProvider::Anthropic => ProviderKind::AnthropicMessages,
        }
    }

    fn default_base_url(self) -> Option<&'static str> {
        match self {
            DemoProvider::OpenAi | DemoProvider::OpenAiResponses => {
                Some("https://api.openai.com/v1")
            }
            DemoProvider::Anthropic => Some("https://api.anthropic.com/v1"),
            // A local server (Ollama, vLLM, llama.cpp) has no canonical address.
            DemoProvider::OpenAiCompatible => None,
        }
    }

    fn default_model(self) -> Option<&'static str> {
        match self {
            DemoProvider::OpenAi | DemoProvider::OpenAiResponses => Some("gpt-4.1-mini"),
            DemoProvider::Anthropic => Some("claude-sonnet-4-5"),
            DemoProvider::OpenAiCompatible => None,
        }
    }

    /// Where the key is read from unless `--api-key-env` says otherwise. A compatible server gets no key by
    /// default: sending an OpenAI key to whatever `--base-url` names would hand it to another server.
    fn default_key_env(self) -> Option<&'static str> {
        match self {
            DemoProvider::OpenAi | DemoProvider::OpenAiResponses => Some("OPENAI_API_KEY"),
            DemoProvider::Anthropic => Some("ANTHROPIC_API_KEY"),
            DemoProvider::OpenAiCompatible => None,
        }
    }

    fn display_name(self) -> &'static str {
        match self {
            DemoProvider::OpenAi => "OpenAI",
            DemoProvider::OpenAiResponses => "OpenAI Responses",
            DemoProvider::Anthropic => "Anthropic",
            DemoProvider::OpenAiCompatible => "OpenAI-compatible",
        }
    }
}

/// The flags of `patchbridge-relay demo`, as given (defaults are applied by [`DemoArgs::setup`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DemoArgs {
    pub port: Option<u16>,
    pub data_dir: Option<PathBuf>,
    pub provider: Option<DemoProvider>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub api_key_env: Option<String>,
}

/// What the command line asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DemoCommand {
    Run(DemoArgs),
    Help,
}

/// A relay configuration for the demo, and what start-up tells the person.
#[derive(Debug, Clone)]
pub struct DemoSetup {
    pub config: RelayConfig,
    /// The folder holding the SQLite file (absolute), to be created before the database opens; `None` when
    /// `PATCHBRIDGE_DATABASE_URL` chose another database.
    pub data_dir: Option<PathBuf>,
    /// The model in one line (`scripted demo model (not AI)`, `gpt-4.1-mini (OpenAI)`).
    pub model: String,
}

/// The demo's fixed settings, in a configuration file's words (so the identity gets the file's defaults).
const DEMO_CONFIG: &str =
    r#"{ "server": { "basePath": "/api" }, "identity": { "mode": "development" } }"#;

/// Characters of a path that `sqlite://` URLs decode: `%` itself, and `?` / `#`, which start parameters.
const SQLITE_PATH: &AsciiSet = &CONTROLS.add(b'%').add(b'?').add(b'#');

impl DemoArgs {
    /// Parses the arguments after `demo`. Errors are one line for the person, shown above [`USAGE`].
    pub fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<DemoCommand, String> {
        let mut parsed = DemoArgs::default();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            // `--flag=value` and `--flag value` both work.
            let (flag, inline) = match arg.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
                _ => (arg.clone(), None),
            };
            let mut value = |what: &str| -> Result<String, String> {
                inline
                    .clone()
                    .or_else(|| args.next())
                    .filter(|v| !v.is_empty())
                    .ok_or_else(|| format!("{flag} needs {what}"))
            };
            match flag.as_str() {
                "-h" | "--help" => return Ok(DemoCommand::Help),
                "--port" => {
                    let text = value("a port number")?;
                    parsed.port = Some(text.parse().map_err(|_| {
                        format!("--port must be a number from 0 to 65535, not `{text}`")
                    })?);
                }
                "--data-dir" => parsed.data_dir = Some(PathBuf::from(value("a folder")?)),
                "--provider" => {
                    let text = value("a provider")?;
                    parsed.provider = Some(DemoProvider::parse(&text).ok_or_else(|| {
                        format!(
                            "--provider must be one of {}, not `{text}`",
                            DemoProvider::ALL.map(DemoProvider::as_str).join(", ")
                        )
                    })?);
                }
                "--model" => parsed.model = Some(value("a model name")?),
                "--base-url" => parsed.base_url = Some(value("a URL")?),
                "--api-key-env" => parsed.api_key_env = Some(value("a variable name")?),
                other => return Err(format!("unknown argument `{other}`")),
            }
        }
        if parsed.provider.is_none() {
            for (flag, given) in [
                ("--model", parsed.model.is_some()),
                ("--base-url", parsed.base_url.is_some()),
                ("--api-key-env", parsed.api_key_env.is_some()),
            ] {
                if given {
                    return Err(format!(
                        "{flag} chooses a real provider's setting: add --provider"
                    ));
                }
            }
        }
        Ok(DemoCommand::Run(parsed))
    }

    /// The relay configuration for these flags. `env` looks up environment variables (the process environment
    /// in the binary; a map in tests); `cwd` resolves a relative `--data-dir`. Nothing is created here.
    pub fn setup(
        &self,
        env: impl Fn(&str) -> Option<String>,
        cwd: &Path,
    ) -> Result<DemoSetup, String> {
        let mut config = RelayConfig::from_json(DEMO_CONFIG).map_err(|e| e.to_string())?;
        config.server.bind = format!("127.0.0.1:{DEFAULT_PORT}");
        config.demo = self.provider.is_none();
        let data_dir = cwd.join(
            self.data_dir
                .as_deref()
                .unwrap_or(Path::new(DEFAULT_DATA_DIR)),
        );
        let database_url = sqlite_url(&data_dir.join(DATABASE_FILE))?;
        config.database.url = database_url.clone();

        config.apply_env(&env).map_err(|e| e.to_string())?;
        if let Some(port) = self.port {
            config.server.bind = format!("127.0.0.1:{port}");
        }
        if self.data_dir.is_some() {
            config.database.url = database_url.clone();
        }
        let data_dir = (config.database.url == database_url).then_some(data_dir);
        // The MCP Apps sandbox (`crate::sandbox`) on the next port, under another host name, for the page's
        // origin only; none with port 0 (the page's origin is not known before the bind).
        if let Some(Ok(addr)) =
            (config.sandbox.is_none()).then(|| config.server.bind.parse::<std::net::SocketAddr>())
        {
            if addr.port() != 0 && addr.port() < u16::MAX && addr.ip().is_loopback() {
                let next = addr.port() + 1;
                config.sandbox = Some(crate::sandbox::config::SandboxConfig {
                    bind: format!("127.0.0.1:{next}"),
                    public_origin: format!("http://localhost:{next}"),
                    page_origins: vec![format!("http://{addr}")],
                });
            }
        }

        let model = match self.provider {
            None => "scripted demo model (not AI)".to_owned(),
            Some(provider) => {
                let model = self.provider_model(provider, &env)?;
                let line = format!("{} ({})", model.upstream_model, provider.display_name());
                config.models = vec![model];
                line
            }
        };
        Ok(DemoSetup {
            config,
            data_dir,
            model,
        })
    }

    /// `models[0]` of the configuration: the provider's defaults, overridden by the flags.
    fn provider_model(
        &self,
        provider: DemoProvider,
        env: &impl Fn(&str) -> Option<String>,
    ) -> Result<ModelConfig, String> {
        let model = self
            .model
            .as_deref()
            .or(provider.default_model())
            .ok_or_else(|| {
                format!("--provider {provider} needs --model (the server's model name)")
            })?;
        let base_url = self
            .base_url
            .as_deref()
            .or(provider.default_base_url())
            .ok_or_else(|| {
                format!("--provider {provider} needs --base-url (e.g. http://127.0.0.1:11434/v1 for Ollama)")
            })?;
        let key_env = self.api_key_env.as_deref().or(provider.default_key_env());
        if let Some(name) = key_env {
            if env(name).is_none_or(|v| v.trim().is_empty()) {
                return Err(format!(
                    "--provider {provider} reads its API key from the environment variable {name}, which is not set \
                     (export {name}=..., or name another variable with --api-key-env)"
                ));
            }
        }
        Ok(ModelConfig {
            id: model.to_owned(),
            provider: provider.adapter(),
            label: Some(format!("{model} ({})", provider.display_name())),
            base_url: base_url.to_owned(),
            upstream_model: model.to_owned(),
            api_key: key_env.map(|name| SecretRef::Env(name.to_owned())),
            // No key: no credentials header at all (a local server); otherwise the adapter's usual header.
            auth_scheme: key_env.is_none().then_some(AuthScheme::None),
            max_output_tokens: None,
            reasoning: None,
            system_prompt: None,
            capabilities: CapabilitiesConfig::default(),
            allow_insecure_http: false,
            prompt_caching: true,
            fallbacks: Vec::new(),
            state_group: None,
        })
    }
}

/// `sqlite://` + the path, with the characters the URL parser decodes escaped.
fn sqlite_url(path: &Path) -> Result<String, String> {
    let text = path
        .to_str()
        .ok_or_else(|| format!("--data-dir: `{}` is not valid UTF-8", path.display()))?;
    Ok(format!(
        "sqlite://{}",
        utf8_percent_encode(text, SQLITE_PATH)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Result<DemoCommand, String> {
        DemoArgs::parse(list.iter().map(|s| s.to_string()))
    }

    fn run(list: &[&str]) -> DemoArgs {
        match args(list).unwrap() {
            DemoCommand::Run(a) => a,
            DemoCommand::Help => panic!("help"),
        }
    }

    #[test]
    fn flags_parse_with_a_space_or_an_equals_sign() {
        assert_eq!(
            run(&[
                "--port",
                "0",
                "--data-dir=/tmp/x y",
                "--provider=anthropic",
                "--model",
                "m"
            ]),
            DemoArgs {
                port: Some(0),
                data_dir: Some(PathBuf::from("/tmp/x y")),
                provider: Some(DemoProvider::Anthropic),
                model: Some("m".into()),
                base_url: None,
                api_key_env: None,
            }
        );
        assert_eq!(args(&["--help"]).unwrap(), DemoCommand::Help);
    }

    #[test]
    fn bad_flags_are_refused_with_what_is_expected() {
        for (list, expected) in [
            (&["--port", "99999"][..], "--port must be a number from 0 to 65535, not `99999`"),
            (&["--port"][..], "--port needs a port number"),
            (&["--provider", "gemini"][..], "--provider must be one of openai, openai-responses, anthropic, openai-compatible, not `gemini`"),
            (&["--model", "gpt-4.1"][..], "--model chooses a real provider's setting: add --provider"),
            (&["--verbose"][..], "unknown argument `--verbose`"),
            (&["--data-dir="][..], "--data-dir needs a folder"),
        ] {
            assert_eq!(args(list).unwrap_err(), expected, "{list:?}");
        }
    }

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: std::collections::HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name: &str| map.get(name).cloned()
    }

    #[test]
    fn without_flags_the_scripted_demo_runs_on_loopback_8787_with_sqlite_in_patchbridge_data() {
        let setup = run(&[])
            .setup(env(&[]), Path::new("/home/ana/try"))
            .unwrap();
        assert_eq!(
            setup.data_dir.as_deref(),
            Some(Path::new("/home/ana/try/patchbridge-data"))
        );
        assert_eq!(setup.model, "scripted demo model (not AI)");
        let v = setup.config.validate().unwrap();
        assert_eq!(v.bind.to_string(), "127.0.0.1:8787");
        let sandbox = v
            .sandbox
            .as_ref()
            .expect("the MCP Apps sandbox on the next port");
        assert_eq!(sandbox.bind.to_string(), "127.0.0.1:8788");
        assert_eq!(sandbox.public_origin, "http://localhost:8788");
        assert_eq!(
            sandbox.page_origins,
            vec!["http://127.0.0.1:8787".to_string()]
        );
        assert_eq!(v.base_path, "/api");
        assert_eq!(
            v.database.url,
            "sqlite:///home/ana/try/patchbridge-data/relay.sqlite3"
        );
        assert!(v.demo_active);
        assert!(v.models.is_empty());
        assert!(matches!(
            v.identity,
            Some(crate::config::ValidatedIdentity::Development { ref header, .. }) if header == "x-patchbridge-user"
        ));
        assert!(
            v.npm_dir.is_none() && v.examples_dir.is_none(),
            "the embedded site is served"
        );
    }

    #[test]
    fn flags_win_over_patchbridge_variables_which_win_over_the_defaults() {
        let vars = env(&[
            ("PATCHBRIDGE_BIND", "127.0.0.2:9000"),
            ("PATCHBRIDGE_DATABASE_URL", "sqlite:///srv/other.sqlite3"),
            ("PATCHBRIDGE_EXAMPLES_DIR", "/srv/examples"),
        ]);
        let setup = run(&[]).setup(&vars, Path::new("/w")).unwrap();
        assert_eq!(setup.config.server.bind, "127.0.0.2:9000");
        assert_eq!(setup.config.database.url, "sqlite:///srv/other.sqlite3");
        assert_eq!(
            setup.data_dir, None,
            "no data folder is made for another database"
        );
        assert_eq!(
            setup.config.server.examples_dir.as_deref(),
            Some(Path::new("/srv/examples"))
        );

        let setup = run(&["--port", "0", "--data-dir", "d"])
            .setup(&vars, Path::new("/w"))
            .unwrap();
        assert_eq!(setup.config.server.bind, "127.0.0.1:0");
        assert_eq!(setup.config.database.url, "sqlite:///w/d/relay.sqlite3");
        assert_eq!(setup.data_dir.as_deref(), Some(Path::new("/w/d")));
    }

    #[test]
    fn the_development_identity_refuses_a_bind_beyond_loopback() {
        let setup = run(&[])
            .setup(
                env(&[("PATCHBRIDGE_BIND", "0.0.0.0:8787")]),
                Path::new("/w"),
            )
            .unwrap();
        assert_eq!(setup.config.validate().unwrap_err().path, "identity.mode");
    }

    #[test]
    fn a_data_dir_with_url_characters_reaches_sqlite_unchanged() {
        use std::str::FromStr;
        let cwd = Path::new("/tmp/a?b#c%d e");
        let setup = run(&[]).setup(env(&[]), cwd).unwrap();
        assert_eq!(
            setup.config.database.url,
            "sqlite:///tmp/a%3Fb%23c%25d e/patchbridge-data/relay.sqlite3"
        );
        let options =
            sqlx::sqlite::SqliteConnectOptions::from_str(&setup.config.database.url).unwrap();
        assert_eq!(
            options.get_filename(),
            cwd.join("patchbridge-data/relay.sqlite3")
        );
    }

    #[test]
    fn openai_and_anthropic_take_their_key_from_their_variable_and_default_model_and_url() {
        for (provider, adapter, url, model, key) in [
            (
                "openai",
                ProviderKind::OpenAiChat,
                "https://api.openai.com/v1",
                "gpt-4.1-mini",
                "OPENAI_API_KEY",
            ),
            (
                "openai-responses",
                ProviderKind::OpenAiResponses,
                "https://api.openai.com/v1",
                "gpt-4.1-mini",
                "OPENAI_API_KEY",
            ),
            (
                "anthropic",
                ProviderKind::AnthropicMessages,
                "https://api.anthropic.com/v1",
                "claude-sonnet-4-5",
                "ANTHROPIC_API_KEY",
            ),
        ] {
            let setup = run(&["--provider", provider])
                .setup(env(&[(key, "sk-1")]), Path::new("/w"))
                .unwrap();
            assert!(
                !setup.config.demo,
                "{provider}: a real provider is never the scripted demo"
            );
            let [m] = &setup.config.models[..] else {
                panic!("{provider}: one model")
            };
            assert_eq!(
                (
                    m.provider,
                    m.base_url.as_str(),
                    m.upstream_model.as_str(),
                    m.id.as_str()
                ),
                (adapter, url, model, model)
            );
            assert_eq!(m.api_key, Some(SecretRef::Env(key.into())), "{provider}");
            assert_eq!(
                m.auth_scheme, None,
                "{provider}: the adapter's usual header"
            );

            let err = run(&["--provider", provider])
                .setup(env(&[(key, " ")]), Path::new("/w"))
                .unwrap_err();
            assert!(
                err.contains(key) && err.contains("not set"),
                "{provider}: {err}"
            );
        }
        let setup = run(&[
            "--provider",
            "anthropic",
            "--model",
            "claude-x",
            "--base-url",
            "https://proxy.example/v1",
            "--api-key-env",
            "MY_KEY",
        ])
        .setup(env(&[("MY_KEY", "k")]), Path::new("/w"))
        .unwrap();
        let m = &setup.config.models[0];
        assert_eq!(
            (m.upstream_model.as_str(), m.base_url.as_str()),
            ("claude-x", "https://proxy.example/v1")
        );
        assert_eq!(m.api_key, Some(SecretRef::Env("MY_KEY".into())));
        assert_eq!(setup.model, "claude-x (Anthropic)");
    }

    #[test]
    fn openai_compatible_needs_a_url_and_a_model_and_sends_no_key_unless_named() {
        let err = run(&["--provider", "openai-compatible", "--model", "llama3.2"])
            .setup(env(&[]), Path::new("/w"))
            .unwrap_err();
        assert!(err.contains("needs --base-url"), "{err}");
        let err = run(&[
            "--provider",
            "openai-compatible",
            "--base-url",
            "http://127.0.0.1:11434/v1",
        ])
        .setup(env(&[]), Path::new("/w"))
        .unwrap_err();
        assert!(err.contains("needs --model"), "{err}");

        let setup = run(&[
            "--provider",
            "openai-compatible",
            "--base-url",
            "http://127.0.0.1:11434/v1",
            "--model",
            "llama3.2",
        ])
        .setup(
            env(&[("OPENAI_API_KEY", "sk-not-for-ollama")]),
            Path::new("/w"),
        )
        .unwrap();
        let v = setup.config.validate().unwrap();
        let m = &v.models[0];
        assert_eq!(m.auth_scheme, AuthScheme::None);
        assert!(
            m.api_key.is_none(),
            "an OpenAI key is not sent to another server"
        );
        assert_eq!(
            m.endpoint.to_string(),
            "http://127.0.0.1:11434/v1/chat/completions"
        );
        assert!(!v.demo_active);
        assert_eq!(v.default_model.as_deref(), Some("llama3.2"));
    }
}
