// Placeholder: filled in by the select work.
export function selfCheckSelect(): bool {
  return true;
}
