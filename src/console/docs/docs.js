// The reference reads the document this server serves; "Authorize" takes a bearer token for "Try it out".
window.ui = window.SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  persistAuthorization: false,
  displayRequestDuration: true,
  validatorUrl: null,
});
