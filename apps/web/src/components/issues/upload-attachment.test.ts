import { describe, expect, it } from "vitest";
import { messageOf } from "./upload-attachment";

describe("upload error messages", () => {
  it("show the route's own sentence for a refusal (413 too large, 422 file name, 403)", () => {
    expect(messageOf(413, { code: "attachment_too_large", message: "The file is larger than 25 MiB; attach a smaller file." })).toBe("The file is larger than 25 MiB; attach a smaller file.");
    expect(messageOf(422, { code: "file_name_invalid", message: "The file name contains control characters." })).toBe("The file name contains control characters.");
    expect(messageOf(403, { code: "forbidden", message: "This needs the issues:write permission." })).toBe("This needs the issues:write permission.");
  });

  it("never show a server error's body; a 413 from a proxy without a body still says why", () => {
    expect(messageOf(500, { code: "internal_error", message: "Something went wrong on the server." })).toBe("The upload failed. Try again in a moment.");
    expect(messageOf(413, null)).toBe("The file is too large to attach.");
    expect(messageOf(401, null)).toBe("Your session has ended. Sign in again.");
  });
});
