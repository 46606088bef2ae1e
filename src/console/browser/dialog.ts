import { h } from './dom.js';

/**
 * A modal confirmation that says exactly what will happen; resolves true on confirm.
 * `fields` (inputs the action needs, e.g. a timeout) go between the text and the buttons.
 */
export function confirmAction(
  title: string,
  text: string,
  confirmLabel: string,
  fields?: HTMLElement,
): Promise<boolean> {
  return new Promise((resolve) => {
    const dialog = h(
      'dialog',
      { class: 'confirm' },
      h(
        'form',
        { method: 'dialog' },
        h('h2', {}, title),
        h('p', {}, text),
        fields ?? null,
        h(
          'div',
          { class: 'actions' },
          h('button', { value: 'cancel', type: 'submit' }, 'Cancel'),
          h('button', { value: 'confirm', type: 'submit', class: 'danger' }, confirmLabel),
        ),
      ),
    );
    dialog.addEventListener('close', () => {
      resolve(dialog.returnValue === 'confirm');
      dialog.remove();
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}
