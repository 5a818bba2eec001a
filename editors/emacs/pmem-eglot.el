;;; pmem-eglot.el --- pmem-lsp for Persistent Memory roots, through eglot  -*- lexical-binding: t; -*-

;; Starts pmem-lsp (eglot) for Markdown files under a Persistent Memory root: the nearest
;; folder above the file with `_index.md', `_core/' or `_archive/' (never `_archive/' or
;; `_core/' themselves).  Load it from your init file:
;;
;;   (load "/path/to/pmem-lsp/editors/emacs/pmem-eglot.el")
;;
;; Needs eglot (built in from Emacs 29; `elpa-eglot' or M-x package-install on 28).

;;; Code:

(require 'eglot)
(require 'project)

(defvar pmem-lsp-command '("pmem-lsp")
  "How to start the server, e.g. (\"~/.venv/bin/pmem-lsp\") or (\"python3\" \"-m\" \"pmem_lsp\").")

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

(dolist (mode '(markdown-mode gfm-mode))
  (add-to-list 'eglot-server-programs
               (cons mode (lambda (&rest _) pmem-lsp-command))))

(defun pmem-eglot-maybe-start ()
  "Start eglot in Markdown buffers under a memory root."
  (when (and buffer-file-name (pmem-root default-directory))
    (eglot-ensure)))

(add-hook 'markdown-mode-hook #'pmem-eglot-maybe-start)
(add-hook 'gfm-mode-hook #'pmem-eglot-maybe-start)

(provide 'pmem-eglot)
;;; pmem-eglot.el ends here
