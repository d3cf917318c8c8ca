/**
 * The one HTML escaper: text placed in HTML element content or in a quoted
 * attribute value (either quote) cannot start markup or end the value.
 */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}
