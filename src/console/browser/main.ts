import { errorText, content, h, mainData, replace } from './dom.js';
import { connectionsPage } from './connections-page.js';
import { createPage } from './create-page.js';
import { exchangesPage } from './exchanges-page.js';
import { messagePage } from './message-page.js';
import { messagesPage } from './messages-page.js';
import { overviewPage } from './overview-page.js';
import { queuePage } from './queue-page.js';
import { redrivePage } from './redrive-page.js';

/** Each console page is server-rendered around a #content that its script fills in. */
const pages: Record<string, () => void | Promise<void>> = {
  overview: overviewPage,
  create: createPage,
  queue: queuePage,
  messages: messagesPage,
  message: messagePage,
  redrive: redrivePage,
  connections: connectionsPage,
  exchanges: exchangesPage,
};

const page = pages[mainData('page')];
if (page) {
  Promise.resolve(page())
    .then(() => document.body.setAttribute('data-ready', 'true'))
    .catch((e: unknown) => replace(content(), h('p', { class: 'error' }, errorText(e))));
}
