const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether the text is a UUID (any version): ids in paths are checked before they reach SQL. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
