import { mount } from 'svelte';
import App from './App.svelte';
import {
  tauriBackend,
  tauriCheckpointsBackend,
  tauriHistoryBackend,
  tauriLoginBackend,
  tauriProjectMcpBackend,
  tauriSecretsBackend,
  tauriSignInBackend,
} from './lib/backend';
import { applyTheme } from './lib/theme';
import { setLoginBackend } from './lib/login';
import './app.css';

const target = document.getElementById('app');
if (!target) throw new Error('index.html has no #app element');
// The OS's colours from the first paint; the saved theme follows with the app's info.
applyTheme('system');
// The sign-in screens' terminal logins (LoginTerminal.svelte).
setLoginBackend(tauriLoginBackend());
mount(App, {
  target,
  props: {
    backend: tauriBackend(),
    history: tauriHistoryBackend(),
    secrets: tauriSecretsBackend(),
    projectMcp: tauriProjectMcpBackend(),
    signIn: tauriSignInBackend(),
    checkpoints: tauriCheckpointsBackend(),
  },
});
