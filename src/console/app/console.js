import { ProblemError, currentSession, endSession, may, resumeSession, signInWithPassword, signInWithSecondFactor, signOut, startSession, storedSession } from './api.js';
import { PAGES } from './pages.js';
import { h, showProblem } from './ui.js';

const REFRESH_MS = 15_000;
const byId = (id) => document.getElementById(id);
let currentPage;
let refreshTimer;
let challenge;

const visible = (page) => page.permission.some((permission) => may(permission));

function showSignIn(message) {
  clearInterval(refreshTimer);
  endSession();
  byId('nav').hidden = true;
  byId('page').hidden = true;
  byId('sign-out').hidden = true;
  byId('refresh').hidden = true;
  byId('who').textContent = '';
  byId('sign-in').hidden = false;
  byId('password-form').hidden = false;
  byId('mfa-form').hidden = true;
  byId('sign-in-problem').replaceChildren();
  if (message) {
    showProblem(new Error(message), byId('sign-in-problem'));
  }
}

async function render(page) {
  const container = byId('page');
  try {
    const parts = await page.render(() => render(page));
    if (currentPage === page) {
      container.replaceChildren(...parts);
      container.dataset.loaded = page.id;
    }
  } catch (error) {
    if (currentPage === page) {
      container.replaceChildren(h('section', { class: 'card' }, h('h2', {}, page.title)));
      showProblem(error, container.firstChild.appendChild(h('div')));
    }
  }
}

function open(page) {
  currentPage = page;
  clearInterval(refreshTimer);
  for (const link of byId('nav').querySelectorAll('a')) {
    link.setAttribute('aria-current', link.dataset.page === page.id ? 'page' : 'false');
  }
  history.replaceState(null, '', `#${page.id}`);
  byId('page').dataset.loaded = '';
  void render(page);
  if (page.autoRefresh) {
    // Only read-only pages refresh themselves: a form being filled in is never rebuilt under the operator.
    refreshTimer = setInterval(() => !byId('dialog').open && currentPage === page && void render(page), REFRESH_MS);
  }
}

async function begin(token, refreshToken, stored) {
  try {
    const expired = () => showSignIn('The session has ended: sign in again.');
    const session = stored ? await resumeSession(stored, expired) : await startSession(token, refreshToken, expired);
    byId('sign-in').hidden = true;
    byId('sign-out').hidden = false;
    byId('refresh').hidden = false;
    byId('who').textContent = `${session.me.email} · ${session.me.roles.join(', ') || 'no roles'}`;
    const pages = PAGES.filter(visible);
    byId('nav').replaceChildren(...pages.map((page) => h('a', { href: `#${page.id}`, 'data-page': page.id, onclick: (event) => (event.preventDefault(), open(page)) }, page.title)));
    byId('nav').hidden = false;
    byId('page').hidden = false;
    if (pages.length === 0) {
      byId('page').replaceChildren(h('section', { class: 'card' }, h('p', {}, 'Your roles grant no ops permission: there is nothing to show.')));
      return;
    }
    const wanted = pages.find((page) => `#${page.id}` === location.hash);
    open(wanted ?? pages[0]);
  } catch (error) {
    showSignIn();
    showProblem(error, byId('sign-in-problem'));
  }
}

byId('password-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.target;
  try {
    const result = await signInWithPassword(form.elements.email.value, form.elements.password.value);
    form.elements.password.value = '';
    if (result.challenge) {
      challenge = result.challenge;
      form.hidden = true;
      byId('mfa-form').hidden = false;
      byId('mfa-form').elements.code.focus();
      return;
    }
    await begin(result.token, result.refreshToken);
  } catch (error) {
    showProblem(error, byId('sign-in-problem'));
  }
});

byId('mfa-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.target;
  try {
    const tokens = await signInWithSecondFactor(challenge, form.elements.code.value.trim(), form.elements.recovery.checked);
    form.elements.code.value = '';
    challenge = undefined;
    await begin(tokens.token, tokens.refreshToken);
  } catch (error) {
    // A spent or expired challenge cannot be retried: start over with the password.
    if (error instanceof ProblemError && error.code === 'invalid_challenge') {
      form.hidden = true;
      byId('password-form').hidden = false;
    }
    showProblem(error, byId('sign-in-problem'));
  }
});

byId('token-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const field = event.target.elements.token;
  const token = field.value.trim().replace(/^Bearer\s+/i, '');
  field.value = '';
  await begin(token);
});

byId('refresh').addEventListener('click', () => currentPage && void render(currentPage));

byId('sign-out').addEventListener('click', async () => {
  try {
    await signOut();
  } catch (error) {
    // The tab stays signed in: saying "signed out" while the session lives on would be a lie.
    showProblem({ code: error.code, message: `Could not end the session: ${error.message}. You are still signed in; try again.` });
    return;
  }
  showSignIn();
});

/** /console#token=…: the fragment never reaches a server; it is read once, then removed from the address bar and history. */
function takeFragmentToken() {
  const token = new URLSearchParams(location.hash.slice(1)).get('token');
  if (!token) {
    return false;
  }
  history.replaceState(null, '', location.pathname + location.search);
  void begin(token);
  return true;
}

// A #token= link opened in a tab already showing the console changes only the fragment: no reload.
window.addEventListener('hashchange', takeFragmentToken);
if (!takeFragmentToken() && !currentSession()) {
  // A reload keeps the tab's session; a stored token that no longer works shows the sign-in.
  const stored = storedSession();
  if (stored) {
    void begin(undefined, undefined, stored);
  } else {
    showSignIn();
  }
}
