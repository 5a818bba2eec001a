;;; archive_held.el --- driven by tests/editors/test_editors_emacs.py  -*- lexical-binding: t; -*-
;; A new user's Emacs: the README's init lines ($PMEM_INIT), Debian's eglot and markdown-mode. The
;; archive code action on a note, its confirmation held open longer than eglot's reply timeout
;; (shrunk from 10 s to $PMEM_TIMEOUT s: the same `jsonrpc-default-request-timeout'), then
;; answered; then the user types in the note's buffer and saves. First, as the control, the same
;; command sent the way eglot 1.9 sends it (`jsonrpc-request'): it times out. Writes $PMEM_OUT.
(package-initialize)
(require 'json)
(require 'markdown-mode)
(load (getenv "PMEM_INIT"))

(defvar held-result nil)
(defun held-put (key value) (push (cons key value) held-result))
(defun held-bool (x) (if x t :json-false))
(defun held-finish (err)
  (held-put 'error err)                 ; nil is JSON null
  (with-temp-file (getenv "PMEM_OUT") (insert (json-encode held-result)))
  (kill-emacs 0))
(defun held-wait (pred seconds)
  (let ((deadline (+ (float-time) seconds)))
    (while (and (< (float-time) deadline) (not (funcall pred))) (accept-process-output nil 0.05))
    (funcall pred)))

(let* ((root (file-name-as-directory (getenv "PMEM_ROOT_UNDER_TEST")))
       (hold (string-to-number (getenv "PMEM_HOLD")))
       (timeout (string-to-number (getenv "PMEM_TIMEOUT")))
       (note (expand-file-name "projects/garden-sensors.md" root))
       (archived (expand-file-name "_archive/projects/garden-sensors.md" root))
       (index (find-file-noselect (expand-file-name "_index.md" root)))
       (prompts nil) (answered nil) (draining nil) action server)
  (find-file note)
  (run-hooks 'post-command-hook)        ; batch has no command loop; eglot-ensure connects from it
  (unless (held-wait #'eglot-current-server 60) (held-finish "eglot did not connect"))
  (setq server (eglot-current-server))
  (held-put 'server_class (symbol-name (eieio-object-class-name server)))
  (held-put 'major_mode (symbol-name major-mode))
  ;; The code action a user picks in M-x eglot-code-actions (the server offers it once it scanned).
  (held-wait (lambda ()
               (setq action (cl-find "Archive projects/garden-sensors.md"
                                     (ignore-errors (eglot-code-actions (point-min) (point-min)))
                                     :key (lambda (a) (plist-get a :title)) :test #'equal)))
             60)
  (unless action (held-finish "no archive code action"))
  ;; The user: reads the confirmation for HOLD seconds, then picks "Archive".
  (advice-add 'completing-read :around
              (lambda (_orig prompt collection &rest _)
                (if draining
                    (progn (setq draining 'done) "Cancel") ; the control's prompt, come late: no
                  (push prompt prompts)
                  (let ((start (float-time)))
                    (while (< (- (float-time) start) hold) (accept-process-output nil 0.05))
                    (push (- (float-time) start) answered))
                  (let ((choices (mapcar (lambda (x) (if (consp x) (car x) x)) collection)))
                    (held-put 'choices choices)
                    (car choices)))))   ; Archive, Recover, …: the action, never Cancel
  (held-put 'default_timeout jsonrpc-default-request-timeout) ; what a user's Emacs waits: 10 s
  (let ((jsonrpc-default-request-timeout timeout)
        (command (plist-get (plist-get action :command) :command))
        (arguments (plist-get (plist-get action :command) :arguments)))
    ;; The control: eglot 1.9's own `eglot-execute-command', line for line.
    (held-put 'control_error
              (condition-case err
                  (progn (jsonrpc-request server :workspace/executeCommand
                                          `(:command ,(format "%s" command) :arguments ,arguments))
                         nil)
                (jsonrpc-error (format "%S" err))))
    (held-put 'control_prompt_shown (length prompts))
    (held-put 'control_prompt_answered (length answered))
    (held-put 'control_moved (held-bool (file-exists-p archived)))
    (when (null prompts)                ; a loaded server asked after the timeout: that one is a no
      (setq draining t)
      (held-wait (lambda () (eq draining 'done)) 30)
      (setq draining nil))
    ;; Through pmem-eglot.el: what M-x eglot-code-actions does with the chosen action.
    (setq prompts nil answered nil pmem-eglot-last-result nil)
    (eglot--read-execute-code-action (list action) server (plist-get action :kind))
    (held-put 'returned_at_once (held-bool (null pmem-eglot-last-result)))
    (unless (held-wait (lambda () pmem-eglot-last-result) (+ 60 hold))
      (held-finish "no answer to pmem.archive")))
  (held-put 'archived_on_disk (held-bool (and (file-exists-p archived) (not (file-exists-p note)))))
  (held-put 'index_after_archive (with-temp-buffer (insert-file-contents (expand-file-name "_index.md" root))
                                                   (buffer-string)))
  (held-put 'records_after_archive
            (with-temp-buffer (insert-file-contents (expand-file-name "_archive/_index.md" root)) (buffer-string)))
  (held-put 'held_seconds (car answered))
  (held-put 'prompt (car prompts))
  (held-put 'result (cdr pmem-eglot-last-result))
  ;; The note's buffer followed the move; the index buffer shows the disk.
  (held-put 'old_path_buffer (held-bool (find-buffer-visiting note)))
  (let ((moved (find-buffer-visiting archived)))
    (held-put 'moved_buffer (held-bool moved))
    (held-put 'index_buffer_is_disk
              (with-current-buffer index
                (held-bool (and (not (buffer-modified-p))
                     (equal (buffer-string)
                            (with-temp-buffer (insert-file-contents (expand-file-name "_index.md" root))
                                              (buffer-string)))))))
    (when moved
      (with-current-buffer moved
        (held-put 'moved_modified (held-bool (buffer-modified-p)))
        (goto-char (point-max))
        (insert "Typed after the archive.\n")
        (save-buffer)
        (held-put 'saved_to_archive
                  (held-bool (and (not (file-exists-p note))
                                  (with-temp-buffer (insert-file-contents archived)
                                                    (string-suffix-p "Typed after the archive.\n" (buffer-string))))))
        ;; M-x pmem-recover from the archived note's buffer: it follows the file back.
        (setq hold 0 pmem-eglot-last-result nil)
        (pmem-recover "projects/garden-sensors.md")
        (unless (held-wait (lambda () pmem-eglot-last-result) 60) (held-finish "no answer to pmem.recover"))
        (held-put 'recover_result (cdr pmem-eglot-last-result))
        (held-put 'recovered_buffer (held-bool (find-buffer-visiting note)))
        (held-put 'archived_buffer_after_recover (held-bool (find-buffer-visiting archived))))))
  ;; Completing a route, as the README says: M-x completion-at-point on an empty list item.
  (with-current-buffer index
    (held-put 'm_tab (symbol-name (key-binding (kbd "M-TAB"))))
    (goto-char (point-max))
    (insert "- ")
    (completion-at-point)
    (held-put 'completed (buffer-substring-no-properties (line-beginning-position) (line-end-position))))
  ;; A buffer with edits when pmem moves its file (typed between the move and the notice): the
  ;; edits stay, and saving to the old path is refused.
  (let* ((scratch (expand-file-name "notes/scratch-moved.md" root))
         (moved-to (expand-file-name "_archive/notes/scratch-moved.md" root)))
    (with-temp-file scratch (insert "# Scratch\n"))
    (with-current-buffer (find-file-noselect scratch)
      (insert "edited\n")
      (delete-file scratch)
      (eglot-handle-notification server 'pmem/filesChanged
                                 :uris (vector (eglot--path-to-uri scratch))
                                 :moved (vector (list :from (eglot--path-to-uri scratch)
                                                      :to (eglot--path-to-uri moved-to))))
      (held-put 'guard (condition-case e (progn (save-buffer) "saved") (user-error (cadr e))))
      (held-put 'guard_kept_edits (held-bool (and (buffer-modified-p) (string-match-p "edited" (buffer-string)))))
      (held-put 'guard_recreated (held-bool (file-exists-p scratch)))
      (set-buffer-modified-p nil)
      (kill-buffer))))
(held-finish nil)
