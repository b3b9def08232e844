// Loaded by every page: behaviour shared by many pages, attached by markup.
//   <button data-copy="#id">       copies that element's text
//   <form data-confirm="Question?"> asks before submitting
import { installCopyButtons } from '../lib/copy.js'

installCopyButtons()

document.addEventListener('submit', (event) => {
  const form = event.target
  if (form instanceof HTMLFormElement && form.dataset.confirm && !window.confirm(form.dataset.confirm)) event.preventDefault()
})
