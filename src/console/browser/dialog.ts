import { h } from './dom.js';

/** A modal confirmation that says exactly what will happen; resolves true on confirm. */
export function confirmAction(title: string, text: string, confirmLabel: string): Promise<boolean> {
  return new Promise((resolve) => {
    const dialog = h('dialog', { class: 'confirm' },
      h('form', { method: 'dialog' },
        h('h2', {}, title), h('p', {}, text),
        h('div', { class: 'actions' },
          h('button', { value: 'cancel', type: 'submit' }, 'Cancel'),
          h('button', { value: 'confirm', type: 'submit', class: 'danger' }, confirmLabel))));
    dialog.addEventListener('close', () => {
      resolve(dialog.returnValue === 'confirm');
      dialog.remove();
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}
