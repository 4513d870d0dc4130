// Small DOM helpers. Everything a CPO or a user sent (station names, addresses, ids) reaches the page as text
// (textContent), never as markup.

type Child = Node | string | undefined | false;

export interface Props {
  className?: string;
  text?: string;
  attrs?: Record<string, string>;
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (props.className) element.className = props.className;
  if (props.text !== undefined) element.textContent = props.text;
  for (const [name, value] of Object.entries(props.attrs ?? {})) element.setAttribute(name, value);
  for (const child of children) if (child !== undefined && child !== false) element.append(child);
  return element;
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`the page has no #${id}`);
  return element as T;
}

/** Replaces an element's children. */
export function fill(element: HTMLElement, ...children: Child[]): void {
  element.replaceChildren(...children.filter((c): c is Node | string => c !== undefined && c !== false));
}
