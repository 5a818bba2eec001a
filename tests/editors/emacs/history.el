;;; history.el --- driven by tests/editors/test_editors_emacs.py  -*- lexical-binding: t; -*-
;; History in a real Emacs with eglot (docs/design.md §11), set up by the README's init lines
;; ($PMEM_INIT). Another program rewrites an open note: the history lens appears in the header
;; line (eglot shows no code lenses); M-x pmem-history lists the entries; M-x pmem-diff and a
;; click on the lens's "diff" show a `diff-mode' buffer of the text before the change against
;; now; M-x pmem-undo, confirmed through `completing-read', puts the text back on disk; a click
;; on "keep" marks the change reviewed and the lens goes away. Writes $PMEM_OUT.
(package-initialize)
(require 'json)
(require 'markdown-mode)
(load (getenv "PMEM_INIT"))

(defvar hist-result nil)
(defun hist-put (key value) (push (cons key value) hist-result))
(defun hist-bool (x) (if x t :json-false))
(defun hist-finish (err)
  (hist-put 'error err)                 ; nil is JSON null
  (with-temp-file (getenv "PMEM_OUT") (insert (json-encode hist-result)))
  (kill-emacs 0))
(defun hist-wait (pred seconds)
  (let ((deadline (+ (float-time) seconds)))
    (while (and (< (float-time) deadline) (not (funcall pred))) (accept-process-output nil 0.05))
    (funcall pred)))
(defun hist-answer (command)
  "Wait for the answer of COMMAND (pmem-eglot-last-result), then return its result."
  (unless (hist-wait (lambda () (equal (car pmem-eglot-last-result) command)) 60)
    (hist-finish (format "no answer to %s" command)))
  (prog1 (cdr pmem-eglot-last-result) (setq pmem-eglot-last-result nil)))
(defun hist-lens () (and pmem-history-lens (substring-no-properties pmem-history-lens)))
(defun hist-click (word)
  "Click WORD in the header line's history lens, as mouse-1 there does."
  (let* ((line pmem-history-lens)
         (at (and line (string-match (concat "\\_<" (regexp-quote word) "\\_>") line)))
         (map (and at (get-text-property at 'local-map line))))
    (unless map (hist-finish (format "no %S in the header line %S" word (hist-lens))))
    (call-interactively (lookup-key map [header-line mouse-1]))))
(defun hist-buffer-text (name)
  (and (hist-wait (lambda () (get-buffer name)) 30)
       (with-current-buffer name (buffer-substring-no-properties (point-min) (point-max)))))

(let* ((root (file-name-as-directory (getenv "PMEM_ROOT_UNDER_TEST")))
       (rel "notes/reading-list.md")
       (note (expand-file-name rel root))
       (prompts nil) original changed)
  (find-file note)
  (run-hooks 'post-command-hook)        ; batch has no command loop; eglot-ensure connects from it
  (unless (hist-wait #'eglot-current-server 60) (hist-finish "eglot did not connect"))
  (hist-put 'server_class (symbol-name (eieio-object-class-name (eglot-current-server))))
  (hist-put 'header_line_has_lens (hist-bool (member '(:eval pmem-history-lens) (ensure-list header-line-format))))
  ;; M-x pmem-history: history begins here (its first entry is the root as it is).
  (pmem-history)
  (hist-answer "pmem.history")
  (hist-put 'history_first (hist-buffer-text (format "*pmem-history %s*" rel)))
  (hist-put 'lens_before (hist-lens))
  ;; Another program rewrites the note on disk (the buffer is not reverted: Emacs without
  ;; auto-revert-mode, or the user not back yet).
  (setq original (with-temp-buffer (insert-file-contents note) (buffer-string)))
  (setq changed (concat (replace-regexp-in-string (regexp-quote "- \"Company of One\" — Paul Jarvis.")
                                                  "- \"Company of Two\" — an agent rewrote this line."
                                                  original t t)
                        "- Appended by another program.\n"))
  (let ((coding-system-for-write 'utf-8-unix)) (write-region changed nil note nil 'quiet))
  (unless (hist-wait (lambda () (string-prefix-p "changed by another program" (or (hist-lens) ""))) 90)
    (hist-finish (format "no history lens after the outside write: %S" (hist-lens))))
  (hist-put 'lens (hist-lens))
  ;; M-x pmem-diff: the text before the change against the disk, in diff-mode.
  (pmem-diff)
  (hist-answer "pmem.diff")
  (let ((name (format "*pmem-diff %s*" rel)))
    (hist-put 'diff (hist-buffer-text name))
    (hist-put 'diff_mode (symbol-name (buffer-local-value 'major-mode (get-buffer name))))
    (kill-buffer name))
  ;; The lens's "diff", clicked: the same.
  (hist-click "diff")
  (hist-answer "pmem.diff")
  (hist-put 'diff_clicked (hist-buffer-text (format "*pmem-diff %s*" rel)))
  ;; M-x pmem-undo: the server previews and asks; the user picks "Undo".
  (advice-add 'completing-read :around
              (lambda (_orig prompt collection &rest _)
                (push prompt prompts)
                (let ((choices (mapcar (lambda (x) (if (consp x) (car x) x)) collection)))
                  (hist-put 'undo_choices choices)
                  (if (member "Undo" choices) "Undo" (car (last choices))))))
  (pmem-undo)
  (hist-put 'undo_result (hist-answer "pmem.undo"))
  (hist-put 'undo_prompt (car prompts))
  (hist-put 'restored_on_disk (hist-bool (equal (with-temp-buffer (insert-file-contents note) (buffer-string)) original)))
  (hist-put 'buffer_is_disk (hist-bool (and (not (buffer-modified-p)) (equal (buffer-string) original))))
  ;; The lens still says the outside change is unreviewed; "keep", clicked, takes it away.
  (hist-put 'lens_after_undo (hist-lens))
  (hist-click "keep")
  (hist-put 'keep_result (hist-answer "pmem.review.accept"))
  (hist-wait (lambda () (null pmem-history-lens)) 60)
  (hist-put 'lens_after_keep (hist-lens)))
(hist-finish nil)
