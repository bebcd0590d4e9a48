// The widget's user-visible strings in English and Chinese. `lang` (attribute) or the browser's language picks
// the table; every key can be overridden through the element's `strings` property. Values that take
// parameters are functions, so translators can order the words as their language needs.

/** @typedef {Record<string, string | ((...args: any[]) => string)>} Strings */

/** @type {Strings} */
const en = {
  title: 'Assistant',
  inputLabel: 'Message',
  inputPlaceholder: 'Ask anything…',
  inputPlaceholderLoading: 'Starting… you can already type',
  send: 'Send',
  stop: 'Stop',
  attachImage: 'Attach image',
  removeImage: 'Remove image',
  history: 'Conversations',
  newConversation: 'New conversation',
  closePanel: 'Close',
  loadMore: 'Load more',
  historyEmpty: 'No saved conversations yet.',
  historyFailed: 'Could not load conversations.',
  untitled: 'Untitled conversation',
  rename: 'Rename',
  renamePrompt: 'New title',
  save: 'Save',
  cancel: 'Cancel',
  delete: 'Delete',
  deleteConfirm: (title) => `Delete “${title}”? This cannot be undone.`,
  deleteConfirmAction: 'Delete',
  deleting: 'Deleting…',
  deleteFailed: (code) => `Not deleted (${code}). The conversation is still there.`,
  renameFailed: (code) => `Not renamed (${code}).`,
  you: 'You',
  assistant: 'Assistant',
  thinking: 'Thinking…',
  thoughts: 'Thoughts',
  toolArguments: 'Arguments',
  toolResult: 'Result',
  toolStatusStreaming: 'Preparing…',
  toolStatusWaiting: 'Waiting for your approval',
  toolStatusRunning: 'Running…',
  toolStatusDone: 'Done',
  toolStatusError: 'Failed',
  toolStatusRejected: 'Rejected',
  toolStatusNotRun: 'Did not run',
  toolStatusInvalid: 'Invalid arguments, not run',
  confirmTitle: (tool) => `Allow “${tool}”?`,
  confirmBody: 'The assistant wants to run this action on this page:',
  confirmNoArguments: 'No arguments.',
  confirmRaw: 'Show raw JSON',
  approve: 'Approve',
  reject: 'Reject',
  maxTokens: 'The answer reached the model’s output limit and may be incomplete.',
  cancelled: 'Stopped. Nothing of that turn was saved.',
  retry: 'Retry',
  dismiss: 'Dismiss',
  continueInNew: 'Continue in a new conversation',
  demoBanner: 'Demo mode: answers come from a scripted demo model, not AI.',
  runtimeFailed: 'The assistant could not start.',
  copy: 'Copy',
  copied: 'Copied',
  imageTooLarge: (max) => `Images can be at most ${max}.`,
  imageNotSupported: 'Only PNG, JPEG, GIF and WebP images can be attached.',
  image: 'Image',
  empty: 'How can I help?',
  limitExceeded: (limit) => `A limit of this turn was reached: ${limit}.`,
  timeout: 'The turn took too long and was stopped.',
  relayUnavailable: 'The server could not be reached. Check the connection, then retry.',
  signedOut: 'You are signed out. Sign in again, then retry.',
  signingIn: 'Signing you in again…',
  spendingLimit: (seconds) => `You have reached your usage limit for now. You can try again ${
    !(seconds > 0) ? 'later' : seconds < 60 ? 'in a few seconds' : seconds < 3600 ? `in ${Math.ceil(seconds / 60)} min`
      : `in about ${Math.ceil(seconds / 3600)} h`}.`,
  conflict: 'This conversation was changed elsewhere (another tab?). Reload it to continue.',
  reload: 'Reload conversation',
  copyAnswer: 'Copy answer',
  goodAnswer: 'Good answer',
  badAnswer: 'Bad answer',
  regenerate: 'Regenerate answer',
  editMessage: 'Edit message',
  editing: 'Editing your last message. Sending replaces it and the answers after it.',
  suggestions: 'Suggestions',
  sources: 'Sources',
};

/** @type {Strings} */
const zh = {
  title: '助手',
  inputLabel: '消息',
  inputPlaceholder: '输入你的问题…',
  inputPlaceholderLoading: '正在启动…可以先输入',
  send: '发送',
  stop: '停止',
  attachImage: '添加图片',
  removeImage: '移除图片',
  history: '历史对话',
  newConversation: '新对话',
  closePanel: '关闭',
  loadMore: '加载更多',
  historyEmpty: '还没有保存的对话。',
  historyFailed: '无法加载历史对话。',
  untitled: '未命名对话',
  rename: '重命名',
  renamePrompt: '新标题',
  save: '保存',
  cancel: '取消',
  delete: '删除',
  deleteConfirm: (title) => `删除“${title}”？此操作无法撤销。`,
  deleteConfirmAction: '删除',
  deleting: '正在删除…',
  deleteFailed: (code) => `未删除（${code}），对话仍然保留。`,
  renameFailed: (code) => `未能重命名（${code}）。`,
  you: '你',
  assistant: '助手',
  thinking: '思考中…',
  thoughts: '思考过程',
  toolArguments: '参数',
  toolResult: '结果',
  toolStatusStreaming: '准备中…',
  toolStatusWaiting: '等待你的确认',
  toolStatusRunning: '执行中…',
  toolStatusDone: '已完成',
  toolStatusError: '失败',
  toolStatusRejected: '已拒绝',
  toolStatusNotRun: '未执行',
  toolStatusInvalid: '参数无效，未执行',
  confirmTitle: (tool) => `允许执行“${tool}”？`,
  confirmBody: '助手想在此页面上执行以下操作：',
  confirmNoArguments: '无参数。',
  confirmRaw: '查看原始 JSON',
  approve: '批准',
  reject: '拒绝',
  maxTokens: '回答达到模型的输出上限，内容可能不完整。',
  cancelled: '已停止，本轮内容未保存。',
  retry: '重试',
  dismiss: '关闭',
  continueInNew: '在新对话中继续',
  demoBanner: '演示模式：回答来自脚本化的演示模型，并非 AI。',
  runtimeFailed: '助手无法启动。',
  copy: '复制',
  copied: '已复制',
  imageTooLarge: (max) => `图片不能超过 ${max}。`,
  imageNotSupported: '只能添加 PNG、JPEG、GIF 或 WebP 图片。',
  image: '图片',
  empty: '有什么可以帮你？',
  limitExceeded: (limit) => `本轮已达到限额：${limit}。`,
  timeout: '本轮耗时过长，已停止。',
  relayUnavailable: '无法连接服务器。请检查网络后重试。',
  signedOut: '你已退出登录。请重新登录后重试。',
  signingIn: '正在重新登录…',
  spendingLimit: (seconds) => `你已暂时达到使用上限。${
    !(seconds > 0) ? '请稍后' : seconds < 60 ? '请几秒后' : seconds < 3600 ? `请 ${Math.ceil(seconds / 60)} 分钟后`
      : `请约 ${Math.ceil(seconds / 3600)} 小时后`}再试。`,
  conflict: '此对话已在别处被修改（另一个标签页？）。请重新加载后继续。',
  reload: '重新加载对话',
  copyAnswer: '复制回答',
  goodAnswer: '好的回答',
  badAnswer: '不好的回答',
  regenerate: '重新生成回答',
  editMessage: '编辑消息',
  editing: '正在编辑你的上一条消息。发送后将替换它及其后的回答。',
  suggestions: '建议',
  sources: '来源',
};

export const TABLES = { en, zh };

/**
 * The language to use: the `lang` attribute if it names a table (`zh-CN` → `zh`), else the browser's first
 * preferred language that has a table, else English.
 * @param {string | null} lang
 * @returns {'en' | 'zh'}
 */
export function pickLanguage(lang) {
  const candidates = lang ? [lang] : (globalThis.navigator?.languages ?? [globalThis.navigator?.language ?? 'en']);
  for (const candidate of candidates) {
    const base = String(candidate).toLowerCase().split('-')[0];
    if (base === 'zh' || base === 'en') return base;
  }
  return 'en';
}

/**
 * A lookup function over the chosen table with the host's overrides on top.
 * @param {'en' | 'zh'} language
 * @param {Strings | undefined} overrides
 */
export function makeTranslator(language, overrides) {
  const table = { ...TABLES[language], ...(overrides ?? {}) };
  /** @param {string} key @param {...any} args */
  return (key, ...args) => {
    const value = table[key] ?? TABLES.en[key] ?? key;
    return typeof value === 'function' ? value(...args) : String(value);
  };
}
