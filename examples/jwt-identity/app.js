// The JWT example's script: the page signs in with its identity provider, keeps the token, and hands it to the
// widget through the `headers` property, a function the widget calls before every relay request (model calls,
// conversation list, saves), so a refreshed token is picked up without restarting anything.
//
// `fetchToken` is the one provider-specific line. Here it asks the local stand-in of dev-idp.mjs; with a real
// provider it is its SDK's call, e.g.
//   Auth0:     await auth0.getTokenSilently()                    (audience = the relay's `identity.audience`)
//   Okta:      oktaAuth.getAccessToken()
//   Entra ID:  (await msal.acquireTokenSilent({ scopes: ['api://YOUR_API/.default'], account })).accessToken
//   Cognito:   (await fetchAuthSession()).tokens.idToken.toString()
//   Firebase:  await auth.currentUser.getIdToken()
//   Clerk:     await Clerk.session.getToken()
//   Supabase:  (await supabase.auth.getSession()).data.session.access_token
//   Keycloak:  (await keycloak.updateToken(30), keycloak.token)
// (SDKs cache tokens and refresh them before they expire, so calling them per request is cheap.)

const IDP = 'http://127.0.0.1:8788';
const agent = document.querySelector('patchbridge-agent');
const form = document.getElementById('sign-in');
const who = document.getElementById('who');
const signOut = document.getElementById('sign-out');

let user = null;
let cached = null; // { token, expiresAt } of the signed-in user

async function fetchToken(name) {
  const response = await fetch(`${IDP}/token?user=${encodeURIComponent(name)}`);
  if (!response.ok) throw new Error(`identity provider answered ${response.status}`);
  const { token, expiresIn } = await response.json();
  return { token, expiresAt: Date.now() + expiresIn * 1000 };
}

/** The current token, fetched again a minute before it expires; null when signed out. */
async function getToken() {
  if (!user) return null;
  if (!cached || cached.expiresAt - Date.now() < 60_000) cached = await fetchToken(user);
  return cached.token;
}

// Called by the widget before each relay request; no header when signed out (the relay then answers 401).
agent.headers = async () => {
  const token = await getToken();
  return token ? { authorization: `Bearer ${token}` } : {};
};

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const name = new FormData(form).get('user');
  try {
    cached = await fetchToken(name);
    user = name;
    who.textContent = `Signed in as ${name}.`;
    signOut.hidden = false;
    // Show this user's own history: a new conversation, not the previous user's.
    agent.controller?.newConversation?.();
  } catch (error) {
    who.textContent = `Sign-in failed: ${error.message}. Is dev-idp.mjs running?`;
  }
});

signOut.addEventListener('click', () => {
  user = null;
  cached = null;
  who.textContent = 'Signed out: the relay answers 401 until you sign in.';
  signOut.hidden = true;
});
