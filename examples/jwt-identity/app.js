// The JWT example's script: the person signs in at the identity provider, which sends them back with a token;
// the page keeps the token and hands it to the widget through the `headers` property, a function the widget
// calls before every relay request (model calls, conversation list, saves), so a renewed token is used from the
// next request on. The element is created once someone is signed in (one per user, so each user's last open
// conversation is remembered apart), and never calls the relay without a token.
//
// Signing in here is a redirect to the local stand-in of dev-idp.mjs. With a real provider its SDK does it and
// hands out the token, e.g.
//   Auth0:     await auth0.getTokenSilently()                    (audience = the relay's `identity.audience`)
//   Okta:      oktaAuth.getAccessToken()
//   Entra ID:  (await msal.acquireTokenSilent({ scopes: ['api://YOUR_API/.default'], account })).accessToken
//   Cognito:   (await fetchAuthSession()).tokens.idToken.toString()
//   Firebase:  await auth.currentUser.getIdToken()
//   Clerk:     await Clerk.session.getToken()
//   Supabase:  (await supabase.auth.getSession()).data.session.access_token
//   Keycloak:  (await keycloak.updateToken(30), keycloak.token)
// (SDKs keep tokens and renew them before they expire, so calling them per request is cheap.)

const IDP = 'http://127.0.0.1:8788';
const STORE = 'jwt-identity:session';
const form = document.getElementById('sign-in');
const who = document.getElementById('who');
const signOut = document.getElementById('sign-out');
const slot = document.getElementById('assistant');
const placeholder = document.getElementById('placeholder');

/** Off to the provider's sign-in; it comes back to this page with `#access_token=…`. */
function signIn(user) {
  const back = location.href.split('#')[0];
  location.assign(`${IDP}/authorize?user=${encodeURIComponent(user)}&redirect_uri=${encodeURIComponent(back)}`);
}

/** The session handed back in the URL fragment, kept for this tab (and the fragment removed from the URL). */
function takeSessionFromUrl() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const token = fragment.get('access_token');
  if (!token) return;
  history.replaceState(null, '', location.pathname + location.search);
  // The token's claims are for display only; the relay verifies the signature.
  const claims = JSON.parse(atob(token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')));
  const session = { token, user: claims.sub, expiresAt: Date.now() + Number(fragment.get('expires_in')) * 1000 };
  sessionStorage.setItem(STORE, JSON.stringify(session));
}

function currentSession() {
  const session = JSON.parse(sessionStorage.getItem(STORE) ?? 'null');
  return session && session.expiresAt - Date.now() > 60_000 ? session : null;
}

/** The token for the next relay request; an expired session signs in again (an SDK would renew it silently). */
async function getToken(user) {
  const session = currentSession();
  if (session?.user !== user) {
    signIn(user);
    throw new Error('signing in again');
  }
  return session.token;
}

function show(session) {
  slot.querySelector('patchbridge-agent')?.remove();
  placeholder.hidden = Boolean(session);
  signOut.hidden = !session;
  who.textContent = session ? `Signed in as ${session.user}.` : 'Signed out.';
  if (!session) return;
  const agent = document.createElement('patchbridge-agent');
  agent.setAttribute('endpoint', '/api');
  agent.setAttribute('storage-key', `jwt-identity:${session.user}`);
  // Called by the widget before each relay request.
  agent.headers = async () => ({ authorization: `Bearer ${await getToken(session.user)}` });
  slot.append(agent);
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  signIn(String(new FormData(form).get('user')));
});

signOut.addEventListener('click', () => {
  sessionStorage.removeItem(STORE);
  show(null);
});

takeSessionFromUrl();
show(currentSession());
