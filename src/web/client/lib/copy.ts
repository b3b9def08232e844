// Copy buttons: <button data-copy="#target"> copies the target's text (or an
// input's value) and says so, for a moment, in its own label.

export function installCopyButtons(root: ParentNode = document): void {
  for (const button of root.querySelectorAll<HTMLButtonElement>('button[data-copy]')) {
    if (button.dataset.copyReady) continue
    button.dataset.copyReady = '1'
    button.addEventListener('click', () => void copyFrom(button))
  }
}

async function copyFrom(button: HTMLButtonElement): Promise<void> {
  const target = document.querySelector<HTMLElement>(button.dataset.copy!)
  if (!target) return
  const text = target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement ? target.value : (target.textContent ?? '')
  const label = button.dataset.label ?? button.textContent ?? 'Copy'
  button.dataset.label = label
  try {
    await navigator.clipboard.writeText(text)
    button.textContent = 'Copied'
  } catch {
    // Clipboard access refused (an insecure origin, a denied permission): select the text for Ctrl+C instead.
    const selection = window.getSelection()
    const range = document.createRange()
    range.selectNodeContents(target)
    selection?.removeAllRanges()
    selection?.addRange(range)
    button.textContent = 'Press Ctrl+C'
  }
  setTimeout(() => { button.textContent = label }, 2000)
}
