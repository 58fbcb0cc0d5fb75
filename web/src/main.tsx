import { render } from 'preact';
import { App } from './app.js';
import { NewerBuildNotice } from './components/newer-build.js';

const root = document.getElementById('app');
if (root) {
  render(
    <>
      <NewerBuildNotice />
      <App />
    </>,
    root,
  );
}
