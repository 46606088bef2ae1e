import { call } from './api.js';
import { errorText, h } from './dom.js';
import type { QueueInfo } from './queue-info.js';

/** Send a message: body, message attributes, and on FIFO queues the group and deduplication ids. */
export function sendForm(q: QueueInfo, onSent: () => void): HTMLFormElement {
  const rows = h('div', { class: 'attr-rows' });
  const addRow = () =>
    rows.append(
      h(
        'div',
        { class: 'attr-row' },
        h('input', { name: 'attrName', placeholder: 'name', 'aria-label': 'Attribute name' }),
        h(
          'select',
          { name: 'attrType', 'aria-label': 'Attribute type' },
          ['String', 'Number', 'Binary'].map((t) => h('option', {}, t)),
        ),
        h('input', { name: 'attrValue', placeholder: 'value (base64 for Binary)', 'aria-label': 'Attribute value' }),
      ),
    );
  const status = h('span', { class: 'form-status muted' });
  const form = h(
    'form',
    { class: 'send' },
    h(
      'label',
      {},
      h('span', { class: 'label' }, 'Body'),
      h('textarea', { name: 'body', rows: 5, required: true, spellcheck: false }),
    ),
    q.fifo
      ? h(
          'div',
          { class: 'row' },
          h(
            'label',
            {},
            h('span', { class: 'label' }, 'Message group id'),
            h('input', { name: 'groupId', required: true }),
          ),
          h(
            'label',
            {},
            h('span', { class: 'label' }, 'Deduplication id'),
            h('input', {
              name: 'dedupId',
              placeholder: q.attributes.ContentBasedDeduplication === 'true' ? 'optional: content-based' : 'required',
            }),
          ),
        )
      : null,
    h(
      'fieldset',
      {},
      h('legend', {}, 'Message attributes'),
      rows,
      h('button', { type: 'button', class: 'link', onclick: addRow }, '+ Add attribute'),
    ),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Send message'), status),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void (async () => {
      const get = (n: string) => (form.elements.namedItem(n) as HTMLInputElement | null)?.value ?? '';
      const attributes: Record<string, Record<string, string>> = {};
      for (const row of rows.querySelectorAll('.attr-row')) {
        const [name, type, value] = [
          ...row.querySelectorAll<HTMLInputElement | HTMLSelectElement>('input, select'),
        ].map((el) => el.value.trim());
        if (!name) continue;
        attributes[name!] =
          type === 'Binary' ? { DataType: type, BinaryValue: value! } : { DataType: type!, StringValue: value! };
      }
      status.textContent = 'Sending…';
      status.className = 'form-status muted';
      try {
        const out = await call<{ MessageId: string }>('SendMessage', {
          QueueUrl: q.url,
          MessageBody: get('body'),
          MessageAttributes: Object.keys(attributes).length ? attributes : undefined,
          MessageGroupId: q.fifo ? get('groupId') : undefined,
          MessageDeduplicationId: q.fifo && get('dedupId') ? get('dedupId') : undefined,
        });
        status.textContent = `Sent ${out.MessageId}.`;
        (form.elements.namedItem('body') as HTMLTextAreaElement).value = '';
        onSent();
      } catch (e) {
        status.textContent = errorText(e);
        status.className = 'form-status error-text';
      }
    })();
  });
  return form;
}
