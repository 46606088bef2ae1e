import { attributesForm, createQueue } from './attributes-form.js';
import { content, h, queueHref, replace } from './dom.js';

const NAME = /^[A-Za-z0-9_-]{1,80}$/;

/** Create a queue: a name, its type, and the same settings as the queue page. */
export async function createPage(): Promise<void> {
  const nameInput = h('input', {
    name: 'QueueName',
    required: true,
    maxlength: 80,
    autocomplete: 'off',
    pattern: '[A-Za-z0-9_\\-]{1,80}',
  });
  const fifoBox = h('input', { type: 'checkbox', name: 'fifo' });
  const nameError = h('small', { class: 'field-error' });
  const holder = h('div');
  const head = h(
    'fieldset',
    { class: 'create-head' },
    h('legend', {}, 'Queue'),
    h(
      'label',
      {},
      h('span', { class: 'label' }, 'Name'),
      nameInput,
      h('small', { class: 'hint' }, 'letters, digits, - and _, up to 80; FIFO queues get “.fifo” added'),
      nameError,
    ),
    h('label', { class: 'inline' }, fifoBox, ' FIFO queue (ordered per group, exactly-once within 5 minutes)'),
  );
  const build = async () => {
    const fifo = fifoBox.checked;
    replace(
      holder,
      await attributesForm({
        fifo,
        submitLabel: 'Create queue',
        onSubmit: async (attributes) => {
          const base = nameInput.value.trim().replace(/\.fifo$/, '');
          nameError.textContent = NAME.test(base) ? '' : 'Use 1 to 80 letters, digits, hyphens or underscores.';
          if (nameError.textContent) throw new Error('The queue name is not valid.');
          const name = fifo ? `${base}.fifo` : base;
          await createQueue(name, fifo, attributes);
          location.assign(queueHref(name));
        },
      }),
    );
  };
  fifoBox.addEventListener('change', () => void build());
  replace(content(), head, holder);
  await build();
}
