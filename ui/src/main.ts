import { mount } from 'svelte';
import App from './App.svelte';
import { tauriBackend } from './lib/backend';
import './app.css';

const target = document.getElementById('app');
if (!target) throw new Error('index.html has no #app element');
mount(App, { target, props: { backend: tauriBackend() } });
