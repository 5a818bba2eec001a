;;; pmem-eglot.el --- pmem-lsp for Persistent Memory roots, through eglot  -*- lexical-binding: t; -*-

;; Starts pmem-lsp (eglot) for Markdown files under a Persistent Memory root: the nearest
;; folder above the file with `_index.md', `_core/' or `_archive/' (never `_archive/' or
;; `_core/' themselves).  Load it from your init file:
;;
;;   (load "/path/to/pmem-lsp/editors/emacs/pmem-eglot.el")
;;
;; Needs eglot (built in from Emacs 29; `elpa-eglot' or M-x package-install on 28).
;;
;; Beyond starting the server (see editors/emacs/README.md):
;; - `pmem.*' commands are sent without a reply timeout.  eglot waits at most
;;   `jsonrpc-default-request-timeout' (10 s) for `workspace/executeCommand', and the server
;;   answers only after the user answered its confirmation: a prompt left open longer vanished
;;   with "Timed out".  Here the request is asynchronous, so the prompt stays as long as the
;;   user needs; the server's outcome is shown when it comes.
;; - The server's `pmem/filesChanged' notice: a buffer whose file pmem moved (archive, delete,
;;   recover) follows it to its new place; one whose file pmem removed (purge) is closed; an
;;   index buffer without edits is reverted to the disk.  Saving never writes a moved file
;;   back to its old path.
;; - Commands: `pmem-status', `pmem-health', `pmem-archive', `pmem-delete', `pmem-recover',
;;   `pmem-purge', `pmem-upgrade'.
;; - History (docs/design.md §11): `pmem-history', `pmem-diff' (a `diff-mode' buffer),
;;   `pmem-ediff', `pmem-undo' (the server asks first), `pmem-review-accept'.  eglot has no
;;   code lens (1.9 up to Emacs 30's), so the server's history lens — "changed by … · diff ·
;;   undo · keep" — is shown in the buffer's header line, its words clickable; it is fetched
;;   when eglot starts managing the buffer, after a revert or a save, and whenever the server
;;   asks (`workspace/codeLens/refresh', which this client declares it supports).

;;; Code:

(require 'cl-lib)
(require 'eglot)
(require 'project)

(defvar pmem-lsp-command '("pmem-lsp")
  "How to start the server, e.g. (\"~/.venv/bin/pmem-lsp\") or (\"python3\" \"-m\" \"pmem_lsp\").")

(defvar pmem-eglot-last-result nil
  "The last answer of a `pmem.*' command: (COMMAND . RESULT), RESULT a plist, or (COMMAND
:error MESSAGE).")

(defvar pmem-eglot-command-functions nil
  "Functions called with (COMMAND RESULT) when a `pmem.*' command answers.")

(defun pmem-root (dir)
  "The memory root above DIR, or nil."
  (locate-dominating-file
   dir
   (lambda (d)
     (let ((d (file-name-as-directory (expand-file-name d))))
       (and (not (string-match-p "/_\\(archive\\|core\\|trash\\)/" d))
            (or (file-regular-p (expand-file-name "_index.md" d))
                (file-directory-p (expand-file-name "_core" d))
                (file-directory-p (expand-file-name "_archive" d))))))))

(defun pmem-project-find (dir)
  "A memory root is a project of its own, git repository or not."
  (let ((root (pmem-root dir)))
    (and root (cons 'transient (expand-file-name root)))))

(add-hook 'project-find-functions #'pmem-project-find -50)

(defclass pmem-eglot-lsp-server (eglot-lsp-server) ()
  :documentation "pmem-lsp: `pmem.*' commands without a timeout, `pmem/filesChanged' handled.")

(defun pmem-eglot--contact (&rest _)
  "What eglot starts: `pmem-lsp-command' (read when the server starts), as pmem's server class."
  (cons 'pmem-eglot-lsp-server pmem-lsp-command))

(dolist (mode '(markdown-mode gfm-mode))
  ;; First in the list, so it wins over other Markdown servers; loading this file twice adds nothing.
  (add-to-list 'eglot-server-programs (cons mode #'pmem-eglot--contact)))

(defun pmem-eglot-maybe-start ()
  "Start eglot in Markdown buffers under a memory root."
  (when (and buffer-file-name (pmem-root default-directory))
    (eglot-ensure)))

(add-hook 'markdown-mode-hook #'pmem-eglot-maybe-start)
(add-hook 'gfm-mode-hook #'pmem-eglot-maybe-start)

;;; Commands, without a reply timeout

(defun pmem-eglot--answered (command result)
  "Keep and announce RESULT of COMMAND.  The server shows the outcome itself."
  (setq pmem-eglot-last-result (cons command result))
  (run-hook-with-args 'pmem-eglot-command-functions command result))

(defun pmem-eglot-execute (server command arguments)
  "Send COMMAND (a string or symbol, `pmem.archive') with ARGUMENTS (a vector) to SERVER.
Returns at once: the server asks for confirmation (`window/showMessageRequest'), which eglot
shows with `completing-read', for as long as the user needs, and shows its outcome itself."
  (let ((command (format "%s" command)))
    (jsonrpc-async-request
     server :workspace/executeCommand `(:command ,command :arguments ,arguments)
     :success-fn (lambda (result) (pmem-eglot--answered command result))
     :error-fn (lambda (err)
                 (let ((msg (or (plist-get err :message) (format "%S" err))))
                   (pmem-eglot--answered command (list :error msg))
                   ;; Refusals (-32803) are shown by the server already.
                   (unless (eql (plist-get err :code) -32803)
                     (message "pmem: %s: %s" command msg))))
     ;; No timer: the answer waits on the user's confirmation, however long it is open.
     :timeout nil)
    nil))

;; eglot up to 1.15 (Debian's 1.9, Emacs 29's 1.12): code actions and commands go through
;; `eglot-execute-command', which waits with `jsonrpc-request' (10 s, then "Timed out").
(cl-defmethod eglot-execute-command ((server pmem-eglot-lsp-server) command arguments)
  (if (string-prefix-p "pmem." (format "%s" command))
      (pmem-eglot-execute server command arguments)
    (cl-call-next-method)))

;; eglot 1.16 and later (Emacs 30): code actions go through `eglot-execute'.  Not tried here.
(when (and (fboundp 'eglot-execute) (cl-generic-p 'eglot-execute))
  (cl-defmethod eglot-execute :around ((server pmem-eglot-lsp-server) action)
    (let* ((command (plist-get action :command))
           (cmd (if (stringp command) action command)))
      (if (and (listp cmd) (stringp (plist-get cmd :command))
               (string-prefix-p "pmem." (plist-get cmd :command))
               (not (plist-get action :edit)))
          (pmem-eglot-execute server (plist-get cmd :command) (plist-get cmd :arguments))
        (cl-call-next-method)))))

(defun pmem-eglot--server ()
  (let ((server (eglot-current-server)))
    (unless (cl-typep server 'pmem-eglot-lsp-server)
      (user-error "pmem: no pmem-lsp server here (open a Markdown file under a memory root)"))
    server))

(defun pmem-eglot--relative (&optional file)
  "FILE (default: the current buffer's) relative to its memory root."
  (let* ((file (or file buffer-file-name))
         (root (and file (pmem-root (file-name-directory file)))))
    (unless root (user-error "pmem: this buffer is not a file under a memory root"))
    (file-relative-name (file-truename file) (file-truename root))))

(defun pmem-status ()
  "Show the memory status (`pmem.status')."
  (interactive)
  (pmem-eglot-execute (pmem-eglot--server) "pmem.status" (vector (list :show t))))

(defun pmem-health ()
  "Show the health proposal (`pmem.health')."
  (interactive)
  (pmem-eglot-execute (pmem-eglot--server) "pmem.health" (vector (list :show t))))

(defun pmem-archive (reason)
  "Archive the current file with REASON (empty: the server's default); the server asks first."
  (interactive (list (read-string (format "Archive %s, reason: " (pmem-eglot--relative)))))
  (pmem-eglot-execute (pmem-eglot--server) "pmem.archive"
                      (vector (append (list :path (pmem-eglot--relative))
                                      (and (not (string-empty-p reason)) (list :reason reason))))))

(defun pmem-eglot--read-path (verb)
  (read-string (format "%s (path relative to the root, the original or in _archive/): " verb)
               (ignore-errors (pmem-eglot--relative))))

(defun pmem-delete (path)
  "Move the archived file PATH to the trash; the server asks first."
  (interactive (list (pmem-eglot--read-path "Delete")))
  (pmem-eglot-execute (pmem-eglot--server) "pmem.delete" (vector (list :path path))))

(defun pmem-recover (path)
  "Bring the archived or trashed file PATH back with its route; the server asks first."
  (interactive (list (pmem-eglot--read-path "Recover")))
  (pmem-eglot-execute (pmem-eglot--server) "pmem.recover" (vector (list :path path))))

(defun pmem-purge (path)
  "Delete the trashed file PATH permanently (past its recover-by date); the server asks first."
  (interactive (list (pmem-eglot--read-path "Delete permanently")))
  (pmem-eglot-execute (pmem-eglot--server) "pmem.purge" (vector (list :path path))))

(defun pmem-upgrade ()
  "Create the missing lifecycle folders and archive index; the server asks first."
  (interactive)
  (pmem-eglot-execute (pmem-eglot--server) "pmem.upgrade" (vector (list))))

;;; History (docs/design.md §11)

(defun pmem-eglot--command (command arguments &optional then)
  "Send COMMAND with the one argument object ARGUMENTS; call THEN with its result, if it answers."
  (let ((server (pmem-eglot--server)))
    (if (null then)
        (pmem-eglot-execute server command (vector arguments))
      (jsonrpc-async-request
       server :workspace/executeCommand `(:command ,command :arguments ,(vector arguments))
       :success-fn (lambda (result) (pmem-eglot--answered command result) (funcall then result))
       :error-fn (lambda (err)
                   (let ((msg (or (plist-get err :message) (format "%S" err))))
                     (pmem-eglot--answered command (list :error msg))
                     (unless (eql (plist-get err :code) -32803) (message "pmem: %s: %s" command msg))))
       :timeout nil))
    nil))

(defun pmem-eglot--show (name text mode)
  "Show TEXT in the read-only buffer NAME, in MODE; return the buffer."
  (let ((buffer (get-buffer-create name)))
    (with-current-buffer buffer
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert text)
        (goto-char (point-min))
        (funcall mode)
        (setq buffer-read-only t)))
    (display-buffer buffer)
    buffer))

(defun pmem-history (&optional path)
  "The history of PATH (default: the current file): every entry that changed it, newest first."
  (interactive)
  (let ((path (or path (pmem-eglot--relative))))
    (pmem-eglot--command "pmem.history" (list :path path :show :json-false)
                         (lambda (result)
                           (pmem-eglot--show (format "*pmem-history %s*" path)
                                             (concat (plist-get result :text) "\n") #'special-mode)))))

(defun pmem-diff (&optional path entry)
  "A `diff-mode' buffer: PATH (default: the current file) before its oldest unreviewed change
\(or before ENTRY) against now — the buffer's text while it has unsaved edits, else the disk."
  (interactive)
  (let ((path (or path (pmem-eglot--relative))))
    (pmem-eglot--command "pmem.diff" (append (list :path path) (and entry (list :entry entry)))
                         (lambda (result)
                           (let ((diff (plist-get result :diff)))
                             (pmem-eglot--show (format "*pmem-diff %s*" path)
                                               (if (string-empty-p diff)
                                                   (format "%s: no difference\n" (plist-get result :title))
                                                 diff)
                                               #'diff-mode))))))

(defun pmem-ediff (&optional path entry)
  "`ediff' of PATH (default: the current file) before its oldest unreviewed change (or ENTRY)
against the file's buffer."
  (interactive)
  (let* ((path (or path (pmem-eglot--relative)))
         (root (pmem-root (if buffer-file-name (file-name-directory buffer-file-name) default-directory)))
         (file (expand-file-name path root)))
    (pmem-eglot--command "pmem.diff" (append (list :path path) (and entry (list :entry entry)))
                         (lambda (result)
                           (let ((old (get-buffer-create (format "*pmem before %s %s*" (plist-get result :entry) path))))
                             (with-current-buffer old
                               (let ((inhibit-read-only t))
                                 (erase-buffer)
                                 (insert (or (plist-get result :old) ""))
                                 (setq buffer-read-only t)))
                             (ediff-buffers old (find-file-noselect file)))))))

(defun pmem-undo (&optional path entry)
  "Undo the newest unreviewed change of PATH (default: the current file), or ENTRY; the server
previews it and asks first."
  (interactive)
  (let ((path (or path (pmem-eglot--relative))))
    (pmem-eglot--command "pmem.undo" (append (list :paths (vector path)) (and entry (list :entry entry)))
                         (lambda (result)
                           (when (eq (plist-get result :applied) t)
                             (pmem-eglot--revert-unmodified path))))))

(defun pmem-review-accept (&optional path)
  "Keep the unreviewed changes of PATH (default: the current file): marked reviewed, the header
line's history lens goes away."
  (interactive)
  (let ((path (or path (pmem-eglot--relative))))
    (pmem-eglot--command "pmem.review.accept" (list :path path)
                         (lambda (_result) (message "pmem: %s: changes kept (marked reviewed)" path)))))

(defun pmem-eglot--revert-unmodified (path)
  "Revert the unmodified buffer of PATH (relative to the current root) to the disk."
  (let* ((root (pmem-root default-directory))
         (buffer (and root (find-buffer-visiting (expand-file-name path root)))))
    (when (and buffer (not (buffer-modified-p buffer)))
      (with-current-buffer buffer (revert-buffer t t t)))))

;;; The history lens, in the header line

(defconst pmem-eglot--lens-commands
  '(("pmem.history" . pmem-history) ("pmem.diff" . pmem-diff) ("pmem.undo" . pmem-undo)
    ("pmem.review.accept" . pmem-review-accept))
  "The server's history lens commands, and what runs them here.")

(defvar-local pmem-history-lens nil
  "The history lens of this buffer, as the header line shows it (nil: no unreviewed change).")

(defun pmem-eglot--run-lens (command arguments)
  "Run the lens COMMAND (a `pmem.*' name) with its ARGUMENTS object, as a click does."
  (pcase command
    ("pmem.history" (pmem-history (plist-get arguments :path)))
    ("pmem.diff" (pmem-diff (plist-get arguments :path) (plist-get arguments :entry)))
    ("pmem.undo" (pmem-undo (elt (plist-get arguments :paths) 0) (plist-get arguments :entry)))
    ("pmem.review.accept" (pmem-review-accept (plist-get arguments :path)))))

(defun pmem-eglot--lens-button (title command arguments)
  (let ((map (make-sparse-keymap))
        (run (lambda () (interactive) (pmem-eglot--run-lens command arguments))))
    (define-key map [header-line mouse-1] run)
    (define-key map [mouse-1] run)
    (propertize title 'face 'link 'mouse-face 'highlight 'local-map map
                'help-echo (format "mouse-1: %s" command) 'pmem-lens (list command arguments))))

(defun pmem-eglot--lens-line (lenses)
  "The header line of LENSES (the server's `textDocument/codeLens' answer): its history lens."
  (let ((parts (cl-loop for lens across lenses
                        for cmd = (plist-get lens :command)
                        for name = (and cmd (plist-get cmd :command))
                        when (assoc name pmem-eglot--lens-commands)
                        collect (pmem-eglot--lens-button (plist-get cmd :title) name
                                                         (elt (plist-get cmd :arguments) 0)))))
    (and parts (mapconcat #'identity parts " · "))))

(defun pmem-eglot-lens-fetch (&optional buffer)
  "Ask the server for BUFFER's (default: the current one's) lenses; show its history lens."
  (let ((buffer (or buffer (current-buffer))))
    (with-current-buffer buffer
      (let ((server (eglot-current-server)))
        (when (and buffer-file-name (cl-typep server 'pmem-eglot-lsp-server))
          (jsonrpc-async-request
           server :textDocument/codeLens `(:textDocument ,(eglot--TextDocumentIdentifier))
           :success-fn (lambda (lenses)
                         (when (buffer-live-p buffer)
                           (with-current-buffer buffer
                             (setq pmem-history-lens (pmem-eglot--lens-line (or lenses [])))
                             (force-mode-line-update))))
           :error-fn #'ignore
           :timeout nil))))))

(defun pmem-eglot--lens-setup ()
  "In a buffer eglot manages for pmem: the header line shows the history lens, kept current."
  (when (cl-typep (eglot-current-server) 'pmem-eglot-lsp-server)
    (if (not eglot--managed-mode)
        (setq pmem-history-lens nil)
      (unless (member '(:eval pmem-history-lens) (ensure-list header-line-format))
        (setq header-line-format (append (list '(:eval pmem-history-lens))
                                         (and header-line-format (ensure-list header-line-format)))))
      (add-hook 'after-revert-hook #'pmem-eglot-lens-fetch nil t)
      (add-hook 'after-save-hook #'pmem-eglot-lens-fetch nil t)
      (pmem-eglot-lens-fetch))))

(add-hook 'eglot-managed-mode-hook #'pmem-eglot--lens-setup)

(cl-defmethod eglot-client-capabilities ((server pmem-eglot-lsp-server))
  "eglot's, and `workspace/codeLens/refresh': the history lens follows the server's entries."
  (let* ((caps (copy-tree (cl-call-next-method server)))
         (workspace (plist-get caps :workspace)))
    (plist-put caps :workspace (plist-put workspace :codeLens '(:refreshSupport t)))))

(cl-defmethod eglot-handle-request
  ((server pmem-eglot-lsp-server) (_method (eql workspace/codeLens/refresh)) &rest _)
  "The server recorded or reviewed history: fetch the lenses of its buffers again."
  (dolist (buffer (eglot--managed-buffers server))
    (pmem-eglot-lens-fetch buffer))
  nil)

;;; Files pmem changed on disk

(defun pmem-eglot--uri-path (uri)
  (funcall (if (fboundp 'eglot-uri-to-path) #'eglot-uri-to-path #'eglot--uri-to-path) uri))

(defun pmem-eglot--refuse-old-path (old new)
  "A `write-contents-functions' guard: this buffer's file was moved by pmem from OLD to NEW."
  (lambda ()
    (when (and (equal (expand-file-name buffer-file-name) old) (not (file-exists-p old)))
      (user-error "pmem moved %s to %s; saving here would bring it back (C-x C-w saves elsewhere)"
                  (file-name-nondirectory old) new))))

(defun pmem-eglot--follow (buffer new)
  "Make the unmodified BUFFER visit NEW instead (pmem moved its file there), keeping point and
windows; eglot closes the old document and opens the new one."
  (let* ((point (with-current-buffer buffer (point)))
         (windows (get-buffer-window-list buffer nil t))
         (old (buffer-file-name buffer))
         (root (pmem-root (file-name-directory new)))
         (name (if root (file-relative-name old root) old))
         (where (if root (file-relative-name new root) new)))
    (kill-buffer buffer)
    (let ((moved (find-file-noselect new)))
      (with-current-buffer moved (goto-char (min point (point-max))))
      (dolist (w windows) (set-window-buffer w moved))
      (message "pmem: %s moved to %s; its buffer follows it" name where)
      moved)))

(cl-defmethod eglot-handle-notification
  ((_server pmem-eglot-lsp-server) (_method (eql pmem/filesChanged)) &key uris moved &allow-other-keys)
  "The server changed these files on disk (a lifecycle step)."
  (let ((moves (mapcar (lambda (m) (cons (pmem-eglot--uri-path (plist-get m :from))
                                         (pmem-eglot--uri-path (plist-get m :to))))
                       (append moved nil))))
    (dolist (uri (append uris nil))
      (let* ((path (pmem-eglot--uri-path uri))
             (buffer (find-buffer-visiting path))
             (dest (cdr (assoc path moves))))
        (when (buffer-live-p buffer)
          (cond
           ((file-exists-p path)              ; an index, or a file that came back: the disk wins
            (unless (buffer-modified-p buffer)
              (with-current-buffer buffer (revert-buffer t t t))))
           ((and dest (file-exists-p dest) (not (buffer-modified-p buffer)))
            (pmem-eglot--follow buffer dest))
           ((not (buffer-modified-p buffer))
            (kill-buffer buffer)
            (message "pmem: %s is gone from the disk; its buffer was closed" path))
           (t                                 ; edits typed meanwhile: kept, but not written back
            (with-current-buffer buffer
              (add-hook 'write-contents-functions
                        (pmem-eglot--refuse-old-path (expand-file-name path) (or dest "the archive"))
                        nil t)
              (message "pmem: %s was moved%s; your edits are kept, saving here is refused"
                       path (if dest (format " to %s" dest) ""))))))))))

(provide 'pmem-eglot)
;;; pmem-eglot.el ends here
