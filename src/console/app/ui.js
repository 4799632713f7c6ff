/** Builds an element; children are nodes or text (never parsed as HTML). */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false || value === null) {
      continue;
    }
    if (name.startsWith('on')) {
      element.addEventListener(name.slice(2), value);
    } else if (value === true) {
      element.setAttribute(name, '');
    } else {
      element.setAttribute(name, String(value));
    }
  }
  element.append(...children.flat().filter((child) => child !== undefined && child !== null && child !== false).map((child) => (child instanceof Node ? child : String(child))));
  return element;
}

const SVG = 'http://www.w3.org/2000/svg';
export function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) {
    element.setAttribute(name, String(value));
  }
  element.append(...children.map((child) => (child instanceof Node ? child : String(child))));
  return element;
}

/** A table from rows and columns of [heading, row → cell]; wrapped so it scrolls on a phone. */
export function table(rows, columns, rowAttributes = () => ({})) {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      {},
      h('thead', {}, h('tr', {}, columns.map(([heading]) => h('th', {}, heading)))),
      h('tbody', {}, rows.map((row) => h('tr', rowAttributes(row), columns.map(([, cell]) => h('td', {}, cell(row)))))),
    ),
  );
}

export function when(value) {
  if (!value) {
    return '—';
  }
  // UTC, ISO 8601, whatever the browser's locale: operators compare times with logs and each other.
  const date = new Date(value);
  return h('time', { datetime: date.toISOString(), title: date.toISOString() }, date.toISOString().replace(/\.\d{3}Z$/, 'Z'));
}

export function bytes(value) {
  return `${(value / 1024 / 1024).toFixed(1)} MiB`;
}

export function badge(text, kind) {
  return h('span', { class: `badge ${kind}` }, text);
}

export function toast(text, kind = 'ok') {
  const element = document.getElementById('toast');
  element.textContent = text;
  element.className = `toast ${kind}`;
  element.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => (element.hidden = true), 6000);
}

/** Shows a refused write: the problem's detail, and its code for the operator's search. */
export function showProblem(error, into) {
  const text = error.code ? `${error.message} (${error.code})` : error.message;
  if (into) {
    into.replaceChildren(h('p', { class: 'problem', role: 'alert' }, text));
  }
  toast(text, 'error');
}

/**
 * A modal form: `fields` are [name, label, element]; resolves with the values, or undefined when
 * cancelled. `submit` may throw a problem: it is shown in the dialog, which stays open.
 */
export function askInDialog(title, fields, submit) {
  const dialog = document.getElementById('dialog');
  const form = document.getElementById('dialog-form');
  const problem = h('div', { class: 'dialog-problem' });
  const confirm = h('button', { type: 'submit', value: 'ok', class: 'primary' }, 'Confirm');
  form.replaceChildren(
    h('h2', {}, title),
    ...fields.map(([name, label, input]) => {
      input.name = name;
      return h('label', {}, label, ' ', input);
    }),
    problem,
    h('div', { class: 'actions' }, h('button', { type: 'button', value: 'cancel', onclick: () => dialog.close('cancel') }, 'Cancel'), confirm),
  );
  return new Promise((resolve) => {
    const onSubmit = async (event) => {
      event.preventDefault();
      const values = Object.fromEntries(fields.map(([name, , input]) => [name, input.type === 'checkbox' ? input.checked : input.value]));
      confirm.disabled = true;
      try {
        const result = await submit(values);
        form.removeEventListener('submit', onSubmit);
        dialog.close('ok');
        resolve(result ?? values);
      } catch (error) {
        problem.replaceChildren(h('p', { class: 'problem', role: 'alert' }, error.code ? `${error.message} (${error.code})` : error.message));
      } finally {
        confirm.disabled = false;
      }
    };
    form.addEventListener('submit', onSubmit);
    dialog.addEventListener(
      'close',
      () => {
        form.removeEventListener('submit', onSubmit);
        if (dialog.returnValue !== 'ok') {
          resolve(undefined);
        }
      },
      { once: true },
    );
    dialog.returnValue = '';
    dialog.showModal();
    form.querySelector('input, textarea, select')?.focus();
  });
}

export const reasonInput = () => h('input', { required: true, maxlength: 500, placeholder: 'Why (recorded in the audit log)' });
