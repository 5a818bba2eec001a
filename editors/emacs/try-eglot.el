;;; try-eglot.el --- the eglot trial of editors/emacs/README.md, in batch mode  -*- lexical-binding: t; -*-
;; PMEM_EMACS_DIR=editors/emacs PMEM_SERVER=.venv/bin/pmem-lsp PMEM_ROOT_UNDER_TEST=/tmp/memory \
;;   emacs --batch -l editors/emacs/try-eglot.el
;; Archives projects/garden-sensors.md in PMEM_ROOT_UNDER_TEST: use a copy of examples/demo-memory.
(package-initialize)
(unless (fboundp 'markdown-mode)                  ; a stand-in when markdown-mode is not installed
  (define-derived-mode markdown-mode text-mode "Markdown"))
(add-to-list 'auto-mode-alist '("\\.md\\'" . markdown-mode))
(load (expand-file-name "pmem-eglot.el" (getenv "PMEM_EMACS_DIR")))
(setq pmem-lsp-command (list (expand-file-name (getenv "PMEM_SERVER"))))
(setq-default eglot-workspace-configuration '(:pmem (:ignore ["PM100"])))

(defun try-say (fmt &rest args) (princ (concat (apply #'format fmt args) "\n")))
(defun try-wait (pred seconds)
  (let ((deadline (+ (float-time) seconds)))
    (while (and (< (float-time) deadline) (not (funcall pred))) (accept-process-output nil 0.1))))

(let* ((root (getenv "PMEM_ROOT_UNDER_TEST"))
       (file (expand-file-name "projects/garden-sensors.md" root)))
  (find-file file)
  (run-hooks 'post-command-hook)          ; batch has no command loop; eglot-ensure connects from it
  (try-say "emacs %s; major mode %s; project %S" emacs-version major-mode (project-current))
  (try-wait #'flymake-diagnostics 20)
  (try-say "server: %S" (and (eglot-current-server) (eglot--server-info (eglot-current-server))))
  (dolist (d (flymake-diagnostics))
    (try-say "diagnostic line %d: %s" (line-number-at-pos (flymake-diagnostic-beg d)) (flymake-diagnostic-text d)))
  ;; A file opened after the scan.
  (with-current-buffer (find-file-noselect (expand-file-name "notes/reading-list.md" root))
    (run-hooks 'post-command-hook)
    (flymake-start)                       ; what flymake's idle timer does in an interactive Emacs
    (try-wait #'flymake-diagnostics 5)
    (try-say "reading-list.md: %d diagnostics" (length (flymake-diagnostics))))
  ;; Archive through the server command; answer the confirmation with "Archive".
  (advice-add 'completing-read :around
              (lambda (_orig prompt coll &rest _)
                (try-say "PROMPT: %s\nCHOICES: %S" prompt (mapcar (lambda (x) (if (consp x) (car x) x)) coll))
                "Archive"))
  ;; pmem-eglot.el sends pmem.* commands without a reply timeout: the answer comes after the
  ;; confirmation, in `pmem-eglot-last-result'.
  (setq pmem-eglot-last-result nil)
  (eglot-execute-command (eglot-current-server) "pmem.archive"
                         (vector (list :path "projects/garden-sensors.md" :reason "trial from emacs")))
  (try-wait (lambda () pmem-eglot-last-result) 60)
  (try-say "archive result: %S" (cdr pmem-eglot-last-result))
  (try-say "buffers: old path %s, archived copy %s"
           (if (find-buffer-visiting file) "visited" "not visited")
           (if (find-buffer-visiting (expand-file-name "_archive/projects/garden-sensors.md" root))
               "visited" "not visited"))
  (try-say "on disk: note there %s, archived copy there %s" (file-exists-p file)
           (file-exists-p (expand-file-name "_archive/projects/garden-sensors.md" root))))
(kill-emacs 0)
