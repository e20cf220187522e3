;; SPDX-License-Identifier: Apache-2.0
; Script-Fu side of tests/test-gimp-plugin.c: each bd-case opens a PNG, runs
; plug-in-backdrop-remove-background non-interactively on the CPU, and exports a PNG whose
; alpha is the person mask, so that the C side can compare it with backdrop-cli's mask.

(define (bd-open file)
  (car (gimp-file-load RUN-NONINTERACTIVE file)))

(define (bd-layers img)
  (car (gimp-image-get-layers img)))

(define (bd-photo-layer img)
  (vector-ref (bd-layers img) 0))

(define (bd-remove img layers output model)
  (plug-in-backdrop-remove-background #:run-mode RUN-NONINTERACTIVE
                                      #:image img
                                      #:drawables layers
                                      #:output output
                                      #:device "cpu"
                                      #:model model))

(define (bd-export img file)
  (gimp-file-save RUN-NONINTERACTIVE img file -1))

(define (bd-check what ok)
  (if (not ok) (error (string-append "test-gimp-plugin: " what))))

; Makes the selection visible as the layer's alpha: clears what is not selected.
(define (bd-selection-to-alpha img layer)
  (if (= FALSE (car (gimp-drawable-has-alpha layer))) (gimp-layer-add-alpha layer))
  (gimp-selection-invert img)
  (gimp-drawable-edit-clear layer)
  (gimp-selection-none img))

; Converts a photo to the PNG that both GIMP and backdrop-cli read, in colour and in grey.
(define (bd-convert in out-rgb out-gray)
  (let ((img (bd-open in)))
    (bd-export img out-rgb)
    (gimp-image-convert-grayscale img)
    (bd-export img out-gray)
    (gimp-image-delete img)))

; One output mode at one precision; back to 8-bit perceptual for the PNG.
(define (bd-case in out model output precision)
  (let* ((img (bd-open in))
         (layer (bd-photo-layer img)))
    (if (not (= precision PRECISION-U8-NON-LINEAR))
        (gimp-image-convert-precision img precision))
    (bd-check "the image has the precision asked for"
              (= precision (car (gimp-image-get-precision img))))
    (bd-remove img (vector layer) output model)
    (cond ((equal? output "mask")
           (bd-check "the layer has a mask" (not (= -1 (car (gimp-layer-get-mask layer))))))
          ((equal? output "layer")
           (bd-check "a cut-out layer was added" (= 2 (vector-length (bd-layers img))))
           (bd-check "the original is hidden" (= FALSE (car (gimp-item-get-visible layer)))))
          ((equal? output "selection")
           (bd-check "something is selected" (= FALSE (car (gimp-selection-is-empty img))))
           (bd-selection-to-alpha img layer)))
    (if (not (= precision PRECISION-U8-NON-LINEAR))
        (gimp-image-convert-precision img PRECISION-U8-NON-LINEAR))
    (bd-export img out)
    (gimp-image-delete img)))

; Two layers at once, one of them moved: each gets its own mask, in its own coordinates.
; out-a and out-b show each layer alone, back at the origin.
(define (bd-case-offsets in out-a out-b model)
  (let* ((img (bd-open in))
         (a (bd-photo-layer img))
         (b (car (gimp-layer-copy a))))
    (gimp-image-insert-layer img b 0 -1)
    (gimp-layer-set-offsets b 40 30)
    (bd-remove img (vector a b) "mask" model)
    (gimp-layer-set-offsets b 0 0)
    (gimp-item-set-visible a FALSE)
    (bd-export img out-b)
    (gimp-item-set-visible a TRUE)
    (gimp-item-set-visible b FALSE)
    (bd-export img out-a)
    (gimp-image-delete img)))

; The selection of a moved layer lands where the layer is.
(define (bd-case-selection-offsets in out model)
  (let* ((img (bd-open in))
         (a (bd-photo-layer img))
         (w (car (gimp-image-get-width img)))
         (h (car (gimp-image-get-height img)))
         (b (car (gimp-layer-copy a))))
    (gimp-image-insert-layer img b 0 -1)
    (gimp-layer-set-offsets b 40 30)
    (gimp-image-resize-to-layers img)
    (bd-remove img (vector b) "selection" model)
    (gimp-image-crop img w h 40 30)
    (gimp-item-set-visible a FALSE)
    (bd-selection-to-alpha img b)
    (bd-export img out)
    (gimp-image-delete img)))

; A layer that already has alpha, transparent in its top-left size x size corner, cut out
; into its alpha: the corner stays transparent, the rest takes the mask.
(define (bd-case-existing-alpha in out model size)
  (let* ((img (bd-open in))
         (layer (bd-photo-layer img)))
    (gimp-layer-add-alpha layer)
    (gimp-image-select-rectangle img CHANNEL-OP-REPLACE 0 0 size size)
    (gimp-drawable-edit-clear layer)
    (gimp-selection-none img)
    (bd-remove img (vector layer) "alpha" model)
    (bd-export img out)
    (gimp-image-delete img)))

; A photo several times the network's size: the mask comes back at full resolution.
(define (bd-scale in out factor)
  (let ((img (bd-open in)))
    (gimp-image-scale img (* factor (car (gimp-image-get-width img)))
                          (* factor (car (gimp-image-get-height img))))
    (bd-export img out)
    (gimp-image-delete img)))

; The edge options, as a layer mask.
(define (bd-case-options in out model refine threshold feather)
  (let* ((img (bd-open in))
         (layer (bd-photo-layer img)))
    (plug-in-backdrop-remove-background #:run-mode RUN-NONINTERACTIVE
                                        #:image img
                                        #:drawables (vector layer)
                                        #:refine-edges refine
                                        #:threshold threshold
                                        #:feather feather
                                        #:device "cpu"
                                        #:model model)
    (bd-export img out)
    (gimp-image-delete img)))

; Keeping everyone, passers-by too, as a layer mask.
(define (bd-case-all-people in out model)
  (let* ((img (bd-open in))
         (layer (bd-photo-layer img)))
    (plug-in-backdrop-remove-background #:run-mode RUN-NONINTERACTIVE
                                        #:image img
                                        #:drawables (vector layer)
                                        #:all-people TRUE
                                        #:device "cpu"
                                        #:model model)
    (bd-export img out)
    (gimp-image-delete img)))

; For the error tests: runs with another model or device and lets the error through.
(define (bd-case-error in model device)
  (let* ((img (bd-open in)))
    (plug-in-backdrop-remove-background #:run-mode RUN-NONINTERACTIVE
                                        #:image img
                                        #:drawables (vector (bd-photo-layer img))
                                        #:device device
                                        #:model model)
    (gimp-image-delete img)))

; The same with a graphics card chosen by its number.
(define (bd-case-gpu-index in model device index)
  (let* ((img (bd-open in)))
    (plug-in-backdrop-remove-background #:run-mode RUN-NONINTERACTIVE
                                        #:image img
                                        #:drawables (vector (bd-photo-layer img))
                                        #:device device
                                        #:gpu-index index
                                        #:model model)
    (gimp-image-delete img)))

; An image of WIDTH x HEIGHT whose one layer is called NAME, as GIMP names the layer of a file
; it opened, without decoding a photo that large; then the plug-in on it.
(define (bd-case-size name model width height)
  (let* ((img (car (gimp-image-new width height RGB)))
         (layer (car (gimp-layer-new img name width height RGB-IMAGE 100 LAYER-MODE-NORMAL))))
    (gimp-image-insert-layer img layer 0 0)
    (plug-in-backdrop-remove-background #:run-mode RUN-NONINTERACTIVE
                                        #:image img
                                        #:drawables (vector layer)
                                        #:device "cpu"
                                        #:model model)
    (gimp-image-delete img)))

; Select ▸ Person on the photo layer: the selection, shown as the layer's alpha.
(define (bd-case-select-person in out model)
  (let* ((img (bd-open in))
         (layer (bd-photo-layer img)))
    (plug-in-backdrop-select-person #:run-mode RUN-NONINTERACTIVE
                                    #:image img
                                    #:drawables (vector layer)
                                    #:device "cpu"
                                    #:model model)
    (bd-check "something is selected" (= FALSE (car (gimp-selection-is-empty img))))
    (bd-selection-to-alpha img layer)
    (bd-export img out)
    (gimp-image-delete img)))

; No model argument: the plug-in looks for the installed model.
(define (bd-case-default-model in)
  (let* ((img (bd-open in)))
    (plug-in-backdrop-remove-background #:run-mode RUN-NONINTERACTIVE
                                        #:image img
                                        #:drawables (vector (bd-photo-layer img))
                                        #:device "cpu")
    (gimp-image-delete img)))
